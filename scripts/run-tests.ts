// `npm test`: the whole suite once on SQLite and once on PostgreSQL.
// `npm test -- --db sqlite` (or postgres) runs one; other arguments go to `node --test`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { closingList } from './skipped-tests.ts';

const args = process.argv.slice(2);
const dbIndex = args.indexOf('--db');
const only = dbIndex >= 0 ? args.splice(dbIndex, 2)[1] : undefined;
if (only !== undefined && only !== 'sqlite' && only !== 'postgres') {
  console.error('--db must be sqlite or postgres');
  process.exit(2);
}
// `node --test` takes files and globs, not folders: a folder means the tests under it.
for (const [i, arg] of args.entries()) {
  if (!arg.startsWith('-') && existsSync(arg) && statSync(arg).isDirectory()) {
    args[i] = `${arg.replace(/\/+$/, '')}/**/*.test.ts`;
  }
}
const files = args.some((a) => !a.startsWith('-')) ? [] : ['test/**/*.test.ts'];

// Unless the caller chose reporters: the usual one on stdout, and the skipped tests collected in a
// file per database to print at the end.
const ownReporters = !args.some((a) => a.startsWith('--test-reporter'));
/**
 * How long one test file may run. `--test-timeout` bounds each test, but only on the file's own
 * thread: a file whose thread never yields would hold the run forever (scripts/test-file-limit.ts).
 */
const FILE_LIMIT_MS = Number(process.env.DOCWRIGHT_TEST_FILE_LIMIT_MS ?? 15 * 60_000);
const fileLimit = path.join(import.meta.dirname, 'test-file-limit.ts');
const scratch = mkdtempSync(path.join(tmpdir(), 'docwright-test-run-'));
const skipReporter = path.join(import.meta.dirname, 'skipped-tests.ts');

/**
 * What a run may leave in its temporary directory: Node's compile cache (agent processes keep
 * it there on purpose) and the empty run folders (`docwright-runs/<pid>`) of server processes a
 * test killed, which the next worker removes. Anything else — a repository, a checkout, a data
 * directory — is a test that did not clean up after itself, and fails the run.
 */
const KEPT = new Set(['node-compile-cache']);

function leftoversIn(tmp: string): string[] {
  return readdirSync(tmp).flatMap((name) => {
    if (KEPT.has(name)) return [];
    if (name !== 'docwright-runs') return [path.join(tmp, name)];
    const runs = path.join(tmp, name);
    return readdirSync(runs).flatMap((pid) =>
      readdirSync(path.join(runs, pid)).map((checkout) => path.join(runs, pid, checkout)),
    );
  });
}

let failed = false;
const skipped: [string, string[]][] = [];
for (const db of only ? [only] : ['sqlite', 'postgres']) {
  console.log(`\n=== test suite on ${db} ===`);
  const skipFile = path.join(scratch, `${db}.skipped`);
  const reporters = ownReporters
    ? [
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${skipReporter}`,
        `--test-reporter-destination=${skipFile}`,
      ]
    : [];
  // A temporary directory of the run's own, so that what tests leave behind can be seen.
  const tmp = mkdtempSync(path.join(tmpdir(), `docwright-test-run-${db}-`));
  const result = spawnSync(
    process.execPath,
    // A test that hangs fails after 5 minutes instead of holding the whole run, a file after
    // FILE_LIMIT_MS even if its thread never yields, and a file whose tests are over exits even if
    // something it started (a timer, a stuck stop()) would keep it alive, once its results are
    // written (scripts/test-file-limit.ts).
    [
      `--import=${fileLimit}`,
      '--test',
      '--test-concurrency=2',
      '--test-timeout=300000',
      '--test-force-exit',
      ...reporters,
      ...args,
      ...files,
    ],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        DOCWRIGHT_TEST_DB: db,
        TMPDIR: tmp,
        DOCWRIGHT_TEST_FILE_LIMIT_MS: String(FILE_LIMIT_MS),
      },
    },
  );
  if (result.status !== 0) failed = true;
  const leftovers = leftoversIn(tmp);
  if (leftovers.length > 0) {
    failed = true;
    console.log(`\n✖ the ${db} run left ${leftovers.length} temporary files or folders behind:`);
    for (const leftover of leftovers.slice(0, 50)) console.log(`  ${leftover}`);
  } else {
    console.log(`\n✔ the ${db} run left nothing in its temporary directory`);
  }
  rmSync(tmp, { recursive: true, force: true });
  if (ownReporters && existsSync(skipFile)) {
    skipped.push([db, readFileSync(skipFile, 'utf8').split('\n').filter(Boolean)]);
  }
}
rmSync(scratch, { recursive: true, force: true });

for (const [db, lines] of skipped) console.log(closingList(db, lines));
process.exit(failed ? 1 : 0);
