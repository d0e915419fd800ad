/**
 * The one retry loop of docwright: an operation that may fail for a moment (a dropped database
 * connection, a busy SQLite file, a code host's 503, a model API's 429, a server restarting
 * under the client) is tried again with exponential backoff and jitter, so that many processes
 * recovering at once do not retry in step. A wait the other side asked for (`Retry-After`)
 * replaces the backoff. Callers say what is retryable, how long they may wait and what to throw
 * when giving up; the loop is the same for all of them. `parseRetryAfter` is the one reading
 * of that header, in milliseconds, for every caller that receives it.
 *
 * Imports nothing and uses no Node-only API: the typed client (`docwright/client`) uses it too.
 */

/** Why the loop gave up: see `RetryOptions.giveUp`. */
export type GiveUpReason =
  /** The failure is not retryable. */
  | 'final'
  /** The attempts are used up. */
  | 'attempts'
  /** The next wait would pass `withinMs` or `deadline`. */
  | 'time'
  /** The other side asked for a wait longer than `maxRequestedDelayMs`. */
  | 'wait-too-long'
  /** `signal` aborted (before or during a wait). */
  | 'aborted';

export interface RetryOptions {
  /** Whether a failure may succeed if tried again; anything else is given up at once. */
  retryable: (error: unknown) => boolean;
  /** Attempts in all, the first included (default 5; `Infinity` for a bound by time alone). */
  attempts?: number;
  /** Give up when the next wait would end more than this long after the first attempt, in ms. */
  withinMs?: number;
  /** Give up when the next wait would end at or after this time (epoch ms). */
  deadline?: number;
  /** Backoff before the second attempt (before jitter), doubled after each (default 100 ms). */
  baseDelayMs?: number;
  /** Longest backoff (default 5 s). */
  maxDelayMs?: number;
  /**
   * `full` waits anywhere from 0 to the backoff (for many processes hitting one database);
   * `equal` waits half the backoff plus up to the other half (default `full`).
   */
  jitter?: 'full' | 'equal';
  /** The wait the other side asked for (`Retry-After`, a rate limit's reset), in ms, used instead of the backoff. */
  requestedDelayMs?: (error: unknown) => number | undefined;
  /** A requested wait longer than this is not waited for: the loop gives up (default `maxDelayMs`). */
  maxRequestedDelayMs?: number;
  /** Ends the loop: no further attempt, no further wait. */
  signal?: AbortSignal | undefined;
  /** Told before each wait (a log line, a transcript event); awaited. */
  onRetry?: (error: unknown, attempt: number, waitMs: number) => void | Promise<void>;
  /**
   * What to throw when the loop gives up (default: the last error; when `signal` aborted, its
   * reason). `waitMs` is the wait that was not taken, for `time` and `wait-too-long`.
   */
  giveUp?: (error: unknown, reason: GiveUpReason, attempt: number, waitMs?: number) => unknown;
}

/**
 * How often and how patiently a caller tries again: the settings every retrying client of
 * docwright takes (a code host, the typed client), fed to `retry` below.
 */
export interface RetryPolicy {
  /** Tries in all, the first included (1: never tried again). */
  attempts: number;
  /** Backoff before the second try, doubled before each further one (with jitter). */
  baseDelayMs: number;
  /** Longest wait between tries; the other side asking for longer (`Retry-After`) is not waited for. */
  maxDelayMs: number;
}

/** The longest wait a `Retry-After` can ask for: the longest a timer waits (2^31-1 ms, about 24.8 days). */
export const MAX_RETRY_AFTER_MS = 2_147_483_647;

/** An HTTP-date names its day or month (IMF-fixdate, RFC 850 or asctime); a bare number is delay-seconds. */
const HTTP_DATE = /[A-Za-z]{3}/;

/**
 * The one reading of a `Retry-After` header (RFC 9110 §10.2.3), in milliseconds: delay-seconds
 * (fractions accepted) or an HTTP-date (a date in the past is 0), at most `MAX_RETRY_AFTER_MS`.
 * Undefined when the header is absent or is neither.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  // Longer than any date or number of seconds: not worth parsing.
  if (text === '' || text.length > 64) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.min(MAX_RETRY_AFTER_MS, Math.ceil(Number(text) * 1000));
  if (!HTTP_DATE.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, date - now));
}

/** Waits `ms`, or rejects with `signal`'s reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The backoff before attempt `attempt + 1`, jittered. */
export function backoffMs(
  attempt: number,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs' | 'jitter'> = {},
): number {
  const nominal = Math.min(options.maxDelayMs ?? 5_000, (options.baseDelayMs ?? 100) * 2 ** (attempt - 1));
  const random = Math.random();
  return Math.round(options.jitter === 'equal' ? nominal / 2 + (random * nominal) / 2 : random * nominal);
}

/**
 * Runs `operation` (given the attempt number, 1 first) until it succeeds, fails for good, or the
 * attempts or the time run out; then throws what `giveUp` says.
 */
export async function retry<T>(
  operation: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const attempts = options.attempts ?? 5;
  const started = Date.now();
  const deadline = Math.min(
    options.deadline ?? Number.POSITIVE_INFINITY,
    options.withinMs === undefined ? Number.POSITIVE_INFINITY : started + options.withinMs,
  );
  const giveUp = (error: unknown, reason: GiveUpReason, attempt: number, waitMs?: number): unknown =>
    options.giveUp
      ? options.giveUp(error, reason, attempt, waitMs)
      : reason === 'aborted'
        ? options.signal!.reason
        : error;
  for (let attempt = 1; ; attempt++) {
    let failure: unknown;
    try {
      return await operation(attempt);
    } catch (error) {
      failure = error;
    }
    if (!options.retryable(failure)) throw giveUp(failure, 'final', attempt);
    if (attempt >= attempts) throw giveUp(failure, 'attempts', attempt);
    if (options.signal?.aborted) throw giveUp(failure, 'aborted', attempt);
    const requested = options.requestedDelayMs?.(failure);
    const maxRequested = options.maxRequestedDelayMs ?? options.maxDelayMs ?? 5_000;
    if (requested !== undefined && requested > maxRequested) {
      throw giveUp(failure, 'wait-too-long', attempt, requested);
    }
    const waitMs = requested ?? backoffMs(attempt, options);
    if (Date.now() + waitMs >= deadline) throw giveUp(failure, 'time', attempt, waitMs);
    await options.onRetry?.(failure, attempt, waitMs);
    try {
      await sleep(waitMs, options.signal);
    } catch {
      throw giveUp(failure, 'aborted', attempt);
    }
  }
}
