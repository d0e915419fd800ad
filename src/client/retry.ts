/**
 * When a failed request may be sent again, and after how long. Only requests that cannot do
 * anything twice are retried (see `isRetryableRequest`), only after a 429, a 503 or a missing
 * response, at most `attempts - 1` times, and never longer than `maxDelayMs` at once: a server that
 * asks for more (an exhausted hourly rate limit) gets the error back to the caller at once.
 */
import { type RetryOptions, type RetryPolicy, retry } from '../retry.ts';
import { DocwrightApiError } from './errors.ts';

export type { RetryPolicy };

const RETRYABLE_STATUSES = new Set([0, 429, 503]);

/** GET, archive (idempotent by the API's contract) and a POST that carries an Idempotency-Key. */
export const isRetryableRequest = (method: string, idempotent: boolean, idempotencyKey?: string) =>
  method === 'GET' || idempotent || idempotencyKey !== undefined;

/**
 * Runs `attempt` under the client's policy: API errors with a retryable status are tried
 * again when `repeatable` (the request cannot do anything twice), after the server's
 * `Retry-After` or a jittered backoff. The caller's abort comes out as its reason.
 */
export function withClientRetries<T>(
  attempt: () => Promise<T>,
  options: { policy: RetryPolicy; repeatable: boolean; signal?: AbortSignal | undefined },
): Promise<T> {
  const { policy } = options;
  const settings: RetryOptions = {
    retryable: (error) =>
      options.repeatable && error instanceof DocwrightApiError && RETRYABLE_STATUSES.has(error.status),
    attempts: policy.attempts,
    baseDelayMs: policy.baseDelayMs,
    maxDelayMs: policy.maxDelayMs,
    jitter: 'equal',
    requestedDelayMs: (error) => {
      const seconds = (error as DocwrightApiError).retryAfter;
      return seconds === undefined ? undefined : seconds * 1000;
    },
    signal: options.signal,
  };
  return retry(attempt, settings);
}
