/**
 * The one retry loop of model calls: rate limits and transient failures retried inside the run's
 * time budget, honouring `Retry-After`. Calls through it pass `maxRetries: 0` to the AI SDK, so
 * that no wait outlives the budget.
 */
import { retry } from '../retry.ts';
import { classifyModelError } from './model-errors.ts';
import { AgentFailure } from './types.ts';

export interface ModelRetryOptions {
  /** Aborts the call and any wait at once; the loop then throws `AgentFailure('cancelled')`. */
  signal?: AbortSignal;
  /** Epoch milliseconds by which the run must end; no wait goes past it. */
  deadline: number;
  /** Calls at most (default 6). */
  maxAttempts?: number;
  /** First backoff before jitter (default 1 s); doubles each retry. */
  initialDelayMs?: number;
  /** Longest backoff when the API gives no `Retry-After` (default 30 s). */
  maxDelayMs?: number;
  /** Told before each wait, e.g. to record an `agent.retry` event. */
  onRetry?(attempt: number, waitMs: number, reason: string): void | Promise<void>;
}

/**
 * Calls `fn` until it succeeds, retrying what `classifyModelError` calls retryable: after the
 * API's `Retry-After` when it gave one, else exponential backoff with jitter. `fn` gets a signal
 * that aborts on `signal` or at the deadline; pass it to the AI SDK as `abortSignal`, with
 * `maxRetries: 0`. Throws an `AgentFailure`: the classified code for a final error or when the
 * next wait would pass the deadline, `budget-exceeded` when the deadline passes during a call,
 * `cancelled` when `signal` aborts.
 */
export function withModelRetries<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  options: ModelRetryOptions,
): Promise<T> {
  const cancelled = () =>
    new AgentFailure('cancelled', 'the run was cancelled while calling the model', {
      cause: options.signal?.reason,
    });
  const outOfTime = (cause?: unknown) =>
    new AgentFailure('budget-exceeded', 'the run reached its time limit while waiting for the model', {
      cause,
    });
  // One call, bounded by the deadline; its own failures (cancelled, out of time) are final.
  const call = async () => {
    if (options.signal?.aborted) throw cancelled();
    const remaining = options.deadline - Date.now();
    if (remaining <= 0) throw outOfTime();
    // Timers take at most 2^31-1 ms; a longer (or infinite) deadline is as good as none.
    const timeout = AbortSignal.timeout(Math.min(remaining, 2_147_483_647));
    try {
      return await fn(options.signal ? AbortSignal.any([options.signal, timeout]) : timeout);
    } catch (error) {
      if (options.signal?.aborted) throw cancelled();
      if (timeout.aborted) throw outOfTime(error);
      throw error;
    }
  };
  return retry(call, {
    retryable: (error) => !(error instanceof AgentFailure) && classifyModelError(error).retryable,
    attempts: Math.max(1, options.maxAttempts ?? 6),
    baseDelayMs: options.initialDelayMs ?? 1000,
    maxDelayMs: options.maxDelayMs ?? 30_000,
    jitter: 'equal',
    requestedDelayMs: (error) => classifyModelError(error).retryAfterMs,
    // However long the API asks for, only the deadline decides whether to wait.
    maxRequestedDelayMs: Number.POSITIVE_INFINITY,
    deadline: options.deadline,
    signal: options.signal,
    onRetry: (error, attempt, waitMs) =>
      options.onRetry?.(attempt, waitMs, classifyModelError(error).message),
    giveUp: (error, reason, attempt, waitMs) => {
      if (error instanceof AgentFailure) return error;
      if (reason === 'aborted') return cancelled();
      const { code, message } = classifyModelError(error);
      const suffix =
        reason === 'attempts'
          ? ` (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})`
          : reason === 'time'
            ? ` (not retried: waiting ${waitMs} ms would pass the run's time limit)`
            : '';
      return new AgentFailure(code, `${message}${suffix}`, { cause: error });
    },
  });
}
