import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');

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
