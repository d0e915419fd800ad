import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMs, type GiveUpReason, MAX_RETRY_AFTER_MS, parseRetryAfter, retry } from '../src/retry.ts';

class Flaky extends Error {
  readonly retryAfterMs: number | undefined;
  constructor(retryAfterMs?: number) {
    super('flaky');
    this.retryAfterMs = retryAfterMs;
  }
}

/** An operation that fails `failures` times with `Flaky`, then answers `done`; records when it ran. */
function failing(failures: number, error: () => Error = () => new Flaky()) {
  const calls: number[] = [];
  const operation = async (attempt: number) => {
    calls.push(Date.now());
    assert.equal(attempt, calls.length, 'attempts are numbered from 1');
    if (calls.length <= failures) throw error();
    return 'done';
  };
  return { operation, calls };
}

const isFlaky = (error: unknown) => error instanceof Flaky;

test('retries a retryable failure until it succeeds; waits grow from the base and stay under the cap', async () => {
  const { operation, calls } = failing(3);
  const waits: number[] = [];
  const result = await retry(operation, {
    retryable: isFlaky,
    baseDelayMs: 20,
    maxDelayMs: 50,
    jitter: 'equal',
    onRetry: (_error, _attempt, waitMs) => void waits.push(waitMs),
  });
  assert.equal(result, 'done');
  assert.equal(calls.length, 4);
  assert.equal(waits.length, 3);
  assert.ok(waits[0]! >= 10 && waits[0]! <= 20, `first wait ${waits[0]}`);
  assert.ok(waits[1]! >= 20 && waits[1]! <= 40, `second wait ${waits[1]}`);
  assert.ok(waits[2]! >= 25 && waits[2]! <= 50, `third wait capped: ${waits[2]}`);
  for (let i = 1; i < calls.length; i++) assert.ok(calls[i]! - calls[i - 1]! >= waits[i - 1]! - 2);
});

test('full jitter waits anywhere from 0 to the backoff; equal jitter at least half of it', () => {
  for (let i = 0; i < 200; i++) {
    const full = backoffMs(3, { baseDelayMs: 100, maxDelayMs: 10_000 });
    assert.ok(full >= 0 && full <= 400);
    const equal = backoffMs(3, { baseDelayMs: 100, maxDelayMs: 10_000, jitter: 'equal' });
    assert.ok(equal >= 200 && equal <= 400);
  }
});

test('a failure that is not retryable is thrown at once, as is', async () => {
  const { operation, calls } = failing(5, () => new Error('final'));
  await assert.rejects(retry(operation, { retryable: isFlaky }), /final/);
  assert.equal(calls.length, 1);
});

test('gives up after the attempts, with the last error or what giveUp says', async () => {
  const { operation, calls } = failing(10);
  const reasons: GiveUpReason[] = [];
  await assert.rejects(
    retry(operation, {
      retryable: isFlaky,
      attempts: 3,
      baseDelayMs: 1,
      giveUp: (error, reason, attempt) => {
        reasons.push(reason);
        return new Error(`gave up after ${attempt}: ${(error as Error).message}`);
      },
    }),
    /gave up after 3: flaky/,
  );
  assert.equal(calls.length, 3);
  assert.deepEqual(reasons, ['attempts']);
});

test('a requested wait (Retry-After) replaces the backoff; one over the cap is not waited for', async () => {
  const asked = failing(1, () => new Flaky(60));
  const waits: number[] = [];
  await retry(asked.operation, {
    retryable: isFlaky,
    baseDelayMs: 1,
    requestedDelayMs: (error) => (error as Flaky).retryAfterMs,
    onRetry: (_e, _a, waitMs) => void waits.push(waitMs),
  });
  assert.deepEqual(waits, [60]);
  assert.ok(asked.calls[1]! - asked.calls[0]! >= 55);

  const tooLong = failing(1, () => new Flaky(10_000));
  let reason: GiveUpReason | undefined;
  await assert.rejects(
    retry(tooLong.operation, {
      retryable: isFlaky,
      maxDelayMs: 1_000,
      requestedDelayMs: (error) => (error as Flaky).retryAfterMs,
      giveUp: (error, why) => {
        reason = why;
        return error;
      },
    }),
    Flaky,
  );
  assert.equal(tooLong.calls.length, 1);
  assert.equal(reason, 'wait-too-long');
});

test('no wait passes withinMs or the deadline', async () => {
  const within = failing(100);
  // Where each wait was planned to end, and why it gave up: no timing of the machine is asserted.
  const plannedEnds: number[] = [];
  let gaveUp: GiveUpReason | undefined;
  await assert.rejects(
    retry(within.operation, {
      retryable: isFlaky,
      attempts: 100,
      baseDelayMs: 40,
      withinMs: 150,
      onRetry: (_e, _a, waitMs) => void plannedEnds.push(Date.now() + waitMs),
      giveUp: (error, reason) => {
        gaveUp = reason;
        return error;
      },
    }),
    Flaky,
  );
  assert.equal(gaveUp, 'time', 'gave up because the next wait would pass the bound');
  assert.ok(within.calls.length >= 2);
  // The bound counts from retry()'s start, which is no later than the first call.
  for (const end of plannedEnds) assert.ok(end <= within.calls[0]! + 150, 'no wait ends past withinMs');

  const deadline = failing(1, () => new Flaky(500));
  let waited: number | undefined;
  await assert.rejects(
    retry(deadline.operation, {
      retryable: isFlaky,
      requestedDelayMs: (error) => (error as Flaky).retryAfterMs,
      maxRequestedDelayMs: Number.POSITIVE_INFINITY,
      deadline: Date.now() + 200,
      giveUp: (error, reason, _attempt, waitMs) => {
        assert.equal(reason, 'time');
        waited = waitMs;
        return error;
      },
    }),
    Flaky,
  );
  assert.equal(waited, 500);
  assert.equal(deadline.calls.length, 1);
});

test('an abort ends the wait at once with the abort reason', async () => {
  const { operation, calls } = failing(10);
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(new Error('stopped by the caller')), 30);
  await assert.rejects(
    retry(operation, { retryable: isFlaky, baseDelayMs: 5_000, jitter: 'equal', signal: controller.signal }),
    /stopped by the caller/,
  );
  assert.ok(Date.now() - started < 1_000);
  assert.equal(calls.length, 1);
});

test('Retry-After is read in milliseconds: delay-seconds and HTTP-dates, bounded; anything else is no answer', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  const table: [string | null | undefined, number | undefined][] = [
    ['120', 120_000],
    [' 2 ', 2_000],
    ['0', 0],
    ['1.5', 1_500],
    // IMF-fixdate, the obsolete RFC 850 and asctime forms.
    ['Wed, 01 Jan 2025 00:00:03 GMT', 3_000],
    ['Wednesday, 01-Jan-25 00:01:00 GMT', 60_000],
    ['Wed Jan  1 00:00:05 2025', 5_000],
    // A date already past is "now".
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    // A wait longer than any timer is cut to the longest one.
    ['99999999999', MAX_RETRY_AFTER_MS],
    ['Fri, 01 Jan 2100 00:00:00 GMT', MAX_RETRY_AFTER_MS],
    ['-5', undefined],
    ['1e3', undefined],
    ['0x10', undefined],
    ['soon', undefined],
    ['', undefined],
    [`${'9'.repeat(100)}`, undefined],
    [null, undefined],
    [undefined, undefined],
  ];
  for (const [value, expected] of table) assert.equal(parseRetryAfter(value, now), expected, String(value));
});
