/**
 * The claim loop the job worker and the webhook dispatcher share (src/worker/claim-loop.ts):
 * wake-ups during a pass are not lost and never start a second claimer; a database that refuses
 * writes pauses claims instead of being hammered.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { ClaimLoop, type ClaimLoopOptions } from '../../src/worker/claim-loop.ts';

/** A promise, and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

function loop(claimOnce: ClaimLoopOptions['claimOnce'], lines: string[] = []) {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)).msg);
      done();
    },
  });
  let enabled = true;
  const claims = new ClaimLoop({
    task: 'claim',
    log: createLogger('info', destination),
    maxBackoffMs: 30_000,
    enabled: () => enabled,
    claimOnce,
  });
  return { claims, disable: () => (enabled = false) };
}

describe('claim loop', () => {
  test('a wake-up during a pass gets one more pass, never a second claimer', async () => {
    const first = gate();
    let calls = 0;
    let running = 0;
    let mostAtOnce = 0;
    const { claims } = loop(async () => {
      calls++;
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      if (calls === 1) await first.opened;
      running--;
      return false; // nothing more to claim in this pass
    });
    claims.wake();
    // Work queued while the first claim looked: these wake-ups must not be lost.
    claims.wake();
    claims.wake();
    first.open();
    await claims.settled();
    assert.equal(mostAtOnce, 1);
    assert.equal(calls, 2, 'the three wake-ups ran the first pass and exactly one more');
  });

  test('a pass claims until there is nothing (or no room) left', async () => {
    let left = 5;
    const { claims } = loop(async () => {
      if (left === 0) return false;
      left--;
      return true;
    });
    claims.wake();
    await claims.settled();
    assert.equal(left, 0);
  });

  test('a disabled loop (stopping) does not claim; settled() waits for the pass under way', async () => {
    const held = gate();
    let calls = 0;
    let finished = false;
    const { claims, disable } = loop(async () => {
      calls++;
      await held.opened;
      finished = true;
      return calls < 10; // "there may be more", a few times over
    });
    claims.wake();
    disable();
    claims.wake();
    const settled = claims.settled().then(() => finished);
    held.open();
    assert.equal(await settled, true);
    assert.equal(calls, 1, 'a claim that returned "more" does not go on once the loop is disabled');
  });

  test('a database that refuses writes pauses claims; a later success says so', async () => {
    const lines: string[] = [];
    let fail = true;
    let calls = 0;
    const { claims } = loop(async () => {
      calls++;
      if (fail) throw Object.assign(new Error('attempt to write a readonly database'), { errcode: 8 });
      return false;
    }, lines);
    claims.wake();
    await claims.settled();
    assert.equal(claims.pausing, true);
    claims.wake();
    await claims.settled();
    assert.equal(calls, 1, 'no claim while pausing');
    assert.match(lines.join('\n'), /claim failed; retrying in 1 s/);
    // The first pause is one second.
    while (claims.pausing) await new Promise((resolve) => setTimeout(resolve, 50));
    fail = false;
    claims.wake();
    await claims.settled();
    assert.equal(calls, 2);
    assert.equal(claims.pausing, false);
    assert.equal(lines.at(-1), 'claims work again');
  });
});
