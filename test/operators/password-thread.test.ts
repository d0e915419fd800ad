/**
 * scrypt runs on a thread of its own (issue 9, finding 10): 32 sign-ins at once used to hold
 * libuv's four shared threads, and every file read of the process waited seconds behind them.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { hashPassword, verifyPassword } from '../../src/operators/passwords.ts';

test('password checks in flight do not hold up file reads', async () => {
  const stored = await hashPassword('correct horse battery staple');
  const checks = Array.from({ length: 5 }, () => verifyPassword('wrong password 123', stored));
  // Each check takes about half a second; on libuv's pool four at a time would fill it.
  await new Promise((r) => setTimeout(r, 50));
  const started = performance.now();
  await readFile(import.meta.filename);
  const readMs = performance.now() - started;
  assert.deepEqual(await Promise.all(checks), Array(5).fill(false));
  // A liveness bound: behind the hashes the read took at least one hash's time (≥ 400 ms here).
  assert.ok(readMs < 250, `a file read waited ${Math.round(readMs)} ms`);
});

test('past 32 waiting checks, more are refused at once with 503 instead of queueing without bound', async () => {
  const stored = await hashPassword('correct horse battery staple', { N: 2 ** 12, r: 8, p: 1 });
  const results = await Promise.allSettled(
    Array.from({ length: 40 }, () => verifyPassword('wrong password 123', stored)),
  );
  const refused = results.filter((r) => r.status === 'rejected');
  assert.equal(refused.length, 8);
  for (const r of refused) {
    const error = (r as PromiseRejectedResult).reason as { code: string; retryAfter: number };
    assert.equal(error.code, 'service-unavailable');
    assert.equal(error.retryAfter, 2);
  }
  // And once the queue drains, checks are accepted again.
  assert.equal(await verifyPassword('correct horse battery staple', stored), true);
});
