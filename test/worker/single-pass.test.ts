// The woken loops' one-pass-at-a-time rule (src/worker/single-pass.ts): wake-ups during a pass
// ask for exactly one more pass after it, passes never overlap, an error is reported and the
// next wake-up still runs, and after stop nothing starts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SinglePass } from '../../src/worker/single-pass.ts';

test('wake-ups during a pass make one more pass; passes never overlap; stop starts none', {
  timeout: 5_000,
}, async () => {
  let running = 0;
  let passes = 0;
  let overlapped = false;
  const errors: string[] = [];
  let release: () => void = () => {};
  const loop = new SinglePass(
    async () => {
      running++;
      overlapped ||= running > 1;
      passes++;
      if (passes === 3) {
        running--;
        throw new Error('third pass failed');
      }
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      running--;
    },
    (error) => errors.push(error.message),
  );
  loop.wake();
  loop.wake();
  loop.wake();
  assert.equal(passes, 1, 'one pass at a time');
  release();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(passes, 2, 'the wake-ups during the first pass made one more, not two');
  release();
  await loop.idle();
  assert.equal(passes, 2);
  loop.wake();
  await loop.idle();
  assert.deepEqual(errors, ['third pass failed']);
  loop.wake();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(passes, 4, 'a failed pass does not stop the next');
  loop.wake();
  const stopped = loop.stop();
  release();
  await stopped;
  loop.wake();
  await loop.idle();
  assert.equal(passes, 4, 'nothing starts once stopped, not even the pass asked for before');
  assert.equal(overlapped, false);
});
