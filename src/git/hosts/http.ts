/**
 * The HTTP side of the code hosts: the failure they classify, retries with
 * backoff (honouring Retry-After and rate-limit resets), per-request
 * timeouts, and one JSON exchange over fetch whose failures are redacted. Nothing
 * here knows about pull requests or `HostError` codes (common.ts maps them).
 */
import type { Redact } from '../../redact.ts';
import { retry } from '../../retry.ts';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** First backoff; doubled each retry (with jitter). */
  baseDelayMs: number;
  /** Longest wait between tries; a host asking for longer (Retry-After) fails as retryable instead. */
  maxDelayMs: number;
  /** Per-request timeout; a request that takes longer counts as a network failure. */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  timeoutMs: 30_000,
};

/**
 * A failed HTTP exchange, already stripped of anything secret: the status
 * (undefined when no answer came: network error, timeout), the answer's
 * headers and the API's own message.
 */
export class HttpFailure extends Error {
  readonly status: number | undefined;
  readonly headers: Record<string, string>;
  readonly body: unknown;
  /** A rate limit answered with a status that is not 429 (GitHub's 403). */
  readonly rateLimited: boolean;
  constructor(
    status: number | undefined,
    message: string,
    options: { headers?: Record<string, string>; body?: unknown; rateLimited?: boolean } = {},
  ) {
    super(message);
    this.name = 'HttpFailure';
    this.status = status;
    this.headers = options.headers ?? {};
    this.body = options.body;
    this.rateLimited = options.rateLimited ?? false;
  }

  /** Network errors, timeouts, rate limits and 5xx answers may go away if tried again. */
  get retryable(): boolean {
    const status = this.status;
    return status === undefined || status === 429 || status >= 500 || this.rateLimited;
  }
}

/** How long the host asked us to wait (Retry-After, or a rate-limit reset time), in ms. */
export function hintedDelayMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const remaining = headers['x-ratelimit-remaining'] ?? headers['ratelimit-remaining'];
  const reset = headers['x-ratelimit-reset'] ?? headers['ratelimit-reset'];
  if (remaining === '0' && reset !== undefined && Number.isFinite(Number(reset))) {
    return Math.max(0, Number(reset) * 1000 - now);
  }
  return undefined;
}

/**
 * Runs `operation`, trying again on retryable `HttpFailure`s with exponential
 * backoff (or the wait the host asked for, when it is within `policy.maxDelayMs`),
 * at most `policy.attempts` times. The caller's abort comes out as its reason.
 */
export function withRetry<T>(
  operation: () => Promise<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<T> {
  return retry(operation, {
    retryable: (error) => error instanceof HttpFailure && error.retryable,
    attempts: policy.attempts,
    baseDelayMs: policy.baseDelayMs,
    maxDelayMs: policy.maxDelayMs,
    jitter: 'equal',
    requestedDelayMs: (error) => hintedDelayMs((error as HttpFailure).headers),
    signal,
  });
}

/**
 * The caller's signal bounded by the per-request timeout. `timeout` is kept
 * apart so that a failure can tell "no answer in time" (retryable) from the
 * caller's own abort (which must go through as is).
 */
export function withTimeout(
  signal: AbortSignal | undefined,
  timeoutMs: number,
): { signal: AbortSignal; timeout: AbortSignal } {
  const timeout = AbortSignal.timeout(timeoutMs);
  return { signal: signal ? AbortSignal.any([signal, timeout]) : timeout, timeout };
}

/** The human message inside an API error body (GitHub, GitLab and Gitea shapes). */
export function apiMessage(body: unknown): string {
  if (typeof body === 'string') return body.trim().slice(0, 500);
  if (typeof body !== 'object' || body === null) return '';
  if (Array.isArray(body)) {
    // Gitea's binding errors: [{ fieldNames, classification, message }].
    return body
      .map((item) => {
        const e = (item ?? {}) as Record<string, unknown>;
        const fields = Array.isArray(e.fieldNames) ? `${e.fieldNames.join(', ')}: ` : '';
        return `${fields}${String(e.message ?? e.classification ?? '')}`;
      })
      .join('; ')
      .slice(0, 500);
  }
  const record = body as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of ['message', 'error', 'error_description']) {
    const value = record[key];
    if (typeof value === 'string') parts.push(value);
    else if (Array.isArray(value)) parts.push(value.map(String).join('; '));
    else if (value && typeof value === 'object') parts.push(JSON.stringify(value));
    if (parts.length > 0) break;
  }
  // GitHub's validation errors: [{ resource, field, code, message? }].
  if (Array.isArray(record.errors)) {
    for (const item of record.errors) {
      if (typeof item === 'string') parts.push(item);
      else if (item && typeof item === 'object') {
        const e = item as Record<string, unknown>;
        if (typeof e.message === 'string') parts.push(e.message);
        else if (e.field !== undefined) parts.push(`${String(e.field)} ${String(e.code ?? 'invalid')}`);
      }
    }
  }
  return parts.join(': ').slice(0, 500);
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * One HTTP exchange with a JSON API: answers ≥ 400 and network failures become
 * `HttpFailure`s; the caller's abort is passed through as is.
 */
async function sendJson(
  fetchImpl: typeof fetch,
  url: URL | string,
  init: { method: string; headers: Record<string, string>; body?: string | undefined },
  options: { signal?: AbortSignal | undefined; timeoutMs: number; redact: Redact },
): Promise<Answer> {
  const { signal, timeout } = withTimeout(options.signal, options.timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await fetchImpl(url, { ...init, signal });
    text = await response.text();
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    const reason = timeout.aborted
      ? `no answer within ${options.timeoutMs} ms`
      : error instanceof Error
        ? ((error.cause as Error | undefined)?.message ?? error.message)
        : String(error);
    throw new HttpFailure(undefined, options.redact(reason));
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  let body: unknown = text;
  if ((headers['content-type'] ?? '').includes('json') && text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (response.status >= 400) {
    const message = apiMessage(body) || response.statusText || `HTTP ${response.status}`;
    throw new HttpFailure(response.status, options.redact(message), { headers, body });
  }
  return { status: response.status, headers, body };
}

/** One request of a `jsonApi`: query parameters, a JSON body, the caller's signal. */
interface JsonRequest {
  query?: Record<string, string | number>;
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/**
 * A small client for a host's JSON API: requests to `base` + a path, with the host's auth
 * headers, a JSON body when there is one, the per-request timeout and the retry policy, and
 * failures redacted.
 */
export function jsonApi(options: {
  base: string;
  /** The host's auth header(s); empty when the project has no token. */
  headers: Record<string, string>;
  fetch: typeof fetch;
  policy: RetryPolicy;
  redact: Redact;
}) {
  return (method: 'GET' | 'POST', path: string, init: JsonRequest = {}): Promise<Answer> => {
    const url = new URL(`${options.base}${path}`);
    for (const [name, value] of Object.entries(init.query ?? {})) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    const { policy, redact } = options;
    return withRetry(
      () =>
        sendJson(
          options.fetch,
          url,
          { method, headers, body },
          { signal: init.signal, timeoutMs: policy.timeoutMs, redact },
        ),
      policy,
      init.signal,
    );
  };
}
