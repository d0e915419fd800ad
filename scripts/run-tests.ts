// `npm test`: the whole suite once on SQLite and once on PostgreSQL.
// `npm test -- --db sqlite` (or postgres) runs one; other arguments go to `node --test`.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

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

let failed = false;
for (const db of only ? [only] : ['sqlite', 'postgres']) {
  console.log(`\n=== test suite on ${db} ===`);
  const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...args, ...files], {
    stdio: 'inherit',
    env: { ...process.env, DOCWRIGHT_TEST_DB: db },
  });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
