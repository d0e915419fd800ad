/**
 * When a failed request may be sent again, and after how long. Only requests that cannot do
 * anything twice are retried (see `isRetryableRequest`), only after a 429, a 503 or a missing
 * response, at most `retries` times, and never longer than `maxDelayMs` at once: a server that
 * asks for more (an exhausted hourly rate limit) gets the error back to the caller at once.
 */
import type { DocwrightApiError } from './errors.ts';

/** The retry settings of a client. */
export interface RetryPolicy {
  /** Retries after the first attempt (0 disables retrying). */
  retries: number;
  /** First back-off without `Retry-After`, in ms; doubled on each further retry. */
  baseDelayMs: number;
  /** Longest single wait; a `Retry-After` beyond it is not waited for. */
  maxDelayMs: number;
}

const RETRYABLE_STATUSES = new Set([0, 429, 503]);

/** GET, archive (idempotent by the API's contract) and a POST that carries an Idempotency-Key. */
export const isRetryableRequest = (method: string, idempotent: boolean, idempotencyKey?: string) =>
  method === 'GET' || idempotent || idempotencyKey !== undefined;

/**
 * How long to wait before retry number `attempt` (1-based) after `error`, or undefined when the
 * error must go to the caller.
 */
export function retryDelay(
  error: DocwrightApiError,
  attempt: number,
  policy: RetryPolicy,
): number | undefined {
  if (attempt > policy.retries || !RETRYABLE_STATUSES.has(error.status)) return undefined;
  if (error.retryAfter !== undefined) {
    const ms = error.retryAfter * 1000;
    return ms <= policy.maxDelayMs ? ms : undefined;
  }
  const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
  // Full jitter on the upper half, so that clients that failed together do not return together.
  return Math.min(policy.maxDelayMs, backoff / 2 + Math.random() * (backoff / 2));
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function wait(ms: number, signal?: AbortSignal): Promise<void> {
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
