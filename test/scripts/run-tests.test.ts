// scripts/run-tests.ts on a tiny suite of its own: the closing list of skipped tests counts what
// Node's summary counts (it once said "18 skipped" where the summary said 9, counting suites too).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { temporaryDirectory } from '../helpers/temp.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** `npm test` on one file, as a person runs it (not as a child of this test runner, which Node would report to). */
function runTests(file: string) {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return spawnSync(process.execPath, ['scripts/run-tests.ts', '--db', 'sqlite', file], {
    cwd: ROOT,
    encoding: 'utf8',
    env,
  });
}

const FIXTURE = `
import { describe, test } from 'node:test';
test('runs', () => {});
test('skipped with a reason', { skip: 'reason one' }, () => {});
test.skip('skipped without one', () => {});
test('skipped while running', (t) => t.skip('reason two'));
describe('a skipped suite', { skip: 'reason three' }, () => {
  test('never reported', () => {});
  test('nor this', () => {});
});
describe('a suite that runs', () => {
  test('skipped inside it', { skip: 'reason four' }, () => {});
});
`;

test('the closing list counts skipped tests as the summary does, and skipped suites apart', () => {
  const dir = temporaryDirectory('docwright-run-tests-');
  const file = path.join(dir, 'fixture.test.mjs');
  writeFileSync(file, FIXTURE);
  const run = runTests(file);
  assert.equal(run.status, 0, run.stdout + run.stderr);
  const summary = Number(/^ℹ skipped (\d+)$/m.exec(run.stdout)?.[1]);
  assert.equal(summary, 4);
  const closing = run.stdout.slice(run.stdout.indexOf('=== sqlite: '));
  assert.match(closing, /^=== sqlite: 4 tests and 1 whole suite skipped \(each with why\) ===$/m);
  const where = path.relative(ROOT, file);
  const listed = closing.split('\n').filter((line) => line.startsWith('  SKIPPED '));
  assert.deepEqual(
    listed.sort(),
    [
      `  SKIPPED ${where} › skipped while running: reason two`,
      `  SKIPPED ${where} › skipped inside it: reason four`,
      `  SKIPPED ${where} › skipped with a reason: reason one`,
      `  SKIPPED ${where} › skipped without one: (no reason given)`,
      `  SKIPPED suite ${where} › a skipped suite: reason three`,
    ].sort(),
  );
});

test('a run with nothing skipped says so', () => {
  const dir = temporaryDirectory('docwright-run-tests-');
  const file = path.join(dir, 'fixture.test.mjs');
  writeFileSync(file, "import { test } from 'node:test';\ntest('runs', () => {});\n");
  const run = runTests(file);
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /^=== sqlite: nothing skipped ===$/m);
});

test('`npm test` stops a test file that runs past its time limit, even one whose thread never yields, and fails naming it', {
  timeout: 60_000,
}, async (t) => {
  // Not this file's own runner context: the nested run is a run of its own.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(
    process.execPath,
    ['scripts/run-tests.ts', '--db', 'sqlite', 'test/fixtures/never-yields.ts'],
    {
      cwd: ROOT,
      env: { ...env, DOCWRIGHT_TEST_FILE_LIMIT_MS: '1000' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A group of its own: if the limit does not work, this test's timeout stops the whole nested run.
      detached: true,
    },
  );
  t.signal.addEventListener('abort', () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(code, 1, output);
  assert.match(output, /never-yields\.ts ran longer than its time limit of 1 s and was stopped/);
  assert.match(output, /ℹ fail 1/);
});
