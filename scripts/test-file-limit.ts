// Preloaded into every test file's process by scripts/run-tests.ts (`--import`). A file whose tests
// are over exits, even if something it started (a timer, a stuck stop()) would keep it alive: a
// moment after its last test, so that its results reach the runner first. (`--test-force-exit` did
// this by exiting at once, and lost the last results of about one file in ten on their way to the
// runner: the PostgreSQL suite reported 1,011 to 1,016 tests from run to run, all passing.)
// A file that runs longer than its time limit is stopped. `--test-timeout` cannot do it for a file whose main
// thread never yields (a catastrophic regular expression, an endless synchronous loop): its timer
// runs on that same thread. This one runs on a thread of its own, writes why to stderr (fd 2,
// straight, since the main thread may never flush a stream again), stops the processes the file
// started, then the file's process. Node's runner reports the file as failed.
import { after } from 'node:test';
import { Worker } from 'node:worker_threads';

const limitMs = Number(process.env.DOCWRIGHT_TEST_FILE_LIMIT_MS);
/** How long a file's process may outlive its last test (its results are written meanwhile). */
const EXIT_AFTER_TESTS_MS = 2_000;

// Only in the test files' processes (`node --test` itself loads this too).
const inTestFile = process.env.NODE_TEST_CONTEXT?.startsWith('child') ?? false;

if (inTestFile) {
  // The root's hook: it runs once every test of the file is over. The exit code stays the runner's.
  after(() => {
    setTimeout(() => process.exit(), EXIT_AFTER_TESTS_MS).unref();
  });
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
