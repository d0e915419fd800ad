/**
 * When a failed delivery is tried again (docs/webhooks.mdx): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
 * 10 h after the attempts before, each with jitter so that endpoints that failed together are
 * not retried together, never sooner than the receiver's `Retry-After`; then it has failed.
 */
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The wait after attempt 1, 2, … fails. */
export const RETRY_DELAYS_MS = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

/** The first attempt plus one per retry. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Each wait is stretched or shortened by up to this fraction at random. */
export const JITTER = 0.1;

/** A `Retry-After` longer than this is cut to it, so that no receiver parks a delivery for ever. */
const MAX_RETRY_AFTER_MS = 10 * HOUR;

/**
 * The wait before the next attempt after attempt number `attempts` failed, or undefined when
 * that was the last. `random` is injectable for tests.
 */
export function retryDelayMs(
  attempts: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  const scheduled = RETRY_DELAYS_MS[attempts - 1];
  if (scheduled === undefined) return undefined;
  const jittered = Math.round(scheduled * (1 + JITTER * (2 * random() - 1)));
  const asked = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  return Math.max(jittered, asked);
}
