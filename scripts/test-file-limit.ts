// Preloaded into every test file's process by scripts/run-tests.ts (`--import`).
//
// `--test-force-exit` ends a file's process as soon as its tests are over, even if something it
// started (a timer, a stuck stop()) would keep it alive, but it exits before the last results
// have left for the runner (nodejs/node#64833): about one file in ten lost some, and the
// PostgreSQL suite reported 1,011 to 1,016 tests from run to run, all passing. Here that exit
// waits a moment, for them to be written.
//
// A file that runs longer than its time limit is stopped. `--test-timeout` cannot do it for a file
// whose main thread never yields (a catastrophic regular expression, an endless synchronous loop):
// its timer runs on that same thread. This one runs on a thread of its own, writes why to stderr (fd 2,
// straight, since the main thread may never flush a stream again), stops the processes the file
// started, then the file's process. Node's runner reports the file as failed.
import { after } from 'node:test';
import { Worker } from 'node:worker_threads';

const limitMs = Number(process.env.DOCWRIGHT_TEST_FILE_LIMIT_MS);
/** How long the runner's exit waits once a file's tests are over (its results are written meanwhile). */
const EXIT_DELAY_MS = 100;

// Only in the test files' processes (`node --test` itself loads this too).
const inTestFile = process.env.NODE_TEST_CONTEXT?.startsWith('child') ?? false;

if (inTestFile) {
  // The root's first hook: it runs once every test of the file is over. An exit before then (by
  // code under test) is not delayed; the runner's own, after every hook, is.
  let testsOver = false;
  after(() => {
    testsOver = true;
  });
  const exit = process.exit.bind(process);
  let exiting = false;
  process.exit = ((code?: number | string | null) => {
    if (!testsOver) return exit(code);
    if (code !== undefined && code !== null) process.exitCode = code;
    if (!exiting) {
      exiting = true;
      setTimeout(() => exit(), EXIT_DELAY_MS);
    }
    return undefined as never;
  }) as typeof process.exit;
}

if (inTestFile && limitMs > 0) {
  const watchdog = new Worker(
    `
    const { execFileSync } = require('node:child_process');
    const { writeSync } = require('node:fs');
    const { workerData: { pid, file, limitMs } } = require('node:worker_threads');
    setTimeout(() => {
      writeSync(2, '\\n✖ ' + file + ' ran longer than its time limit of ' + limitMs / 1000 + ' s and was stopped' +
        ' (DOCWRIGHT_TEST_FILE_LIMIT_MS). If its main thread never yields — a catastrophic regular' +
        ' expression or glob, a synchronous loop — its own timeouts cannot fire.\\n');
      try { execFileSync('pkill', ['-KILL', '-P', String(pid)], { stdio: 'ignore' }); } catch {}
      process.kill(pid, 'SIGKILL');
    }, limitMs);
    `,
    { eval: true, workerData: { pid: process.pid, file: process.argv[1], limitMs } },
  );
  watchdog.unref();
}
