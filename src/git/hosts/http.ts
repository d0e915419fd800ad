/**
 * The HTTP side of the code hosts: the failure they classify, retries with backoff (honouring
 * Retry-After and rate-limit resets), per-request timeouts, answers read only up to a bound,
 * page-by-page listing, and one exchange over fetch whose failures are redacted. Nothing here
 * knows about pull requests or `HostError` codes (common.ts maps them).
 */
import type { Redact } from '../../redact.ts';
import { parseRetryAfter, type RetryPolicy, retry } from '../../retry.ts';
import { LineSplitter } from '../lines.ts';
import { fetchWithinOrigin, RedirectRefused } from './redirects.ts';

export type { RetryPolicy };

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
};

/** Per-request timeout: a request that takes longer counts as a network failure (retryable). */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The largest JSON answer read. Lists are read page by page, so only a host gone wrong (or a
 * compare of a huge range) sends more; it fails instead of filling the memory.
 */
export const MAX_JSON_BYTES = 16 * 1024 * 1024;

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
  /** The answer was larger than the client reads (see `MAX_JSON_BYTES`); trying again will not help. */
  readonly tooLarge: boolean;
  constructor(
    status: number | undefined,
    message: string,
    options: {
      headers?: Record<string, string>;
      body?: unknown;
      rateLimited?: boolean;
      tooLarge?: boolean;
    } = {},
  ) {
    super(message);
    this.name = 'HttpFailure';
    this.status = status;
    this.headers = options.headers ?? {};
    this.body = options.body;
    this.rateLimited = options.rateLimited ?? false;
    this.tooLarge = options.tooLarge ?? false;
  }

  /** Network errors, timeouts, rate limits and 5xx answers may go away if tried again. */
  get retryable(): boolean {
    if (this.tooLarge) return false;
    const status = this.status;
    return status === undefined || status === 429 || status >= 500 || this.rateLimited;
  }
}

/**
 * How long the host asked us to wait, in ms: `Retry-After`, else the reset time of an
 * exhausted rate limit (GitHub's `x-ratelimit-*`, GitLab's `ratelimit-*`, both epoch seconds).
 */
export function hintedDelayMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const requested = parseRetryAfter(headers['retry-after'], now);
  if (requested !== undefined) return requested;
  const remaining = headers['x-ratelimit-remaining'] ?? headers['ratelimit-remaining'];
  const reset = headers['x-ratelimit-reset'] ?? headers['ratelimit-reset'];
  if (remaining === '0' && reset !== undefined && /^\d{1,12}$/.test(reset.trim())) {
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
  const record: Record<string, unknown> = Object.fromEntries(Object.entries(body));
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

/**
 * Reads a body up to `maxBytes`. Past it the stream is cancelled (the rest is never read) and
 * `complete` is false; `text` then holds the first `maxBytes` (a multi-byte character cut at the
 * end is dropped).
 */
export async function readBounded(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<{ text: string; complete: boolean }> {
  if (!body) return { text: '', complete: true };
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let text = '';
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + decoder.decode(), complete: true };
    const room = maxBytes - read;
    if (value.byteLength > room) {
      text += decoder.decode(value.subarray(0, room), { stream: true });
      await reader.cancel().catch(() => {});
      return { text, complete: false };
    }
    read += value.byteLength;
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * Reads a text body line by line (see `LineSplitter`), until it ends or `onLine` answers
 * `false`; then the rest is left unread.
 */
export async function readLines(
  body: ReadableStream<Uint8Array> | null,
  onLine: (line: string) => boolean | undefined,
  maxLineLength: number,
): Promise<{ complete: boolean }> {
  const lines = new LineSplitter(onLine, maxLineLength);
  if (!body) return { complete: lines.end() };
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { complete: lines.push(decoder.decode()) && lines.end() };
    if (!lines.push(decoder.decode(value, { stream: true }))) {
      await reader.cancel().catch(() => {});
      return { complete: false };
    }
  }
}

/** A host's answer; `T` is what the caller knows the host's API answers there (its JSON, unchecked). */
export interface Answer<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

/** How a host says that a failed answer is a rate limit (when its status alone does not). */
export type RateLimitTest = (status: number, headers: Record<string, string>, message: string) => boolean;

interface Exchange {
  fetch: typeof fetch;
  url: URL;
  init: { method: string; headers: Record<string, string>; body?: string | undefined };
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  redact: Redact;
  rateLimited?: RateLimitTest | undefined;
  checkUrl?: ((url: URL) => Promise<void>) | undefined;
}

/** Headers as a plain record (names lower-cased by fetch). */
const headerRecord = (headers: Headers) => Object.fromEntries(headers);

/**
 * One HTTP exchange: answers ≥ 400, network failures and refused redirects (redirects.ts: no
 * credential leaves its origin) become `HttpFailure`s (their bodies read up to a bound); the
 * caller's abort is passed through as is. `read` reads a successful answer,
 * under the same timeout.
 */
async function exchange<T>(
  options: Exchange,
  read: (response: Response, headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const { signal, timeout } = withTimeout(options.signal, options.timeoutMs);
  const noAnswer = (error: unknown) => {
    if (options.signal?.aborted) throw options.signal.reason;
    if (error instanceof HttpFailure) throw error;
    // A refused redirect is the host's answer, not a network failure: trying again will not help.
    if (error instanceof RedirectRefused) throw new HttpFailure(error.status, options.redact(error.message));
    const reason = timeout.aborted
      ? `no answer within ${options.timeoutMs} ms`
      : error instanceof Error
        ? ((error.cause as Error | undefined)?.message ?? error.message)
        : String(error);
    throw new HttpFailure(undefined, options.redact(reason));
  };
  let response: Response;
  try {
    response = await fetchWithinOrigin(options.fetch, options.url, options.init, signal, options.checkUrl);
  } catch (error) {
    return noAnswer(error);
  }
  const headers = headerRecord(response.headers);
  try {
    if (response.status < 400) return await read(response, headers);
    const { text } = await readBounded(response.body, 64 * 1024);
    const body = parseJson(text, headers);
    const message = apiMessage(body) || response.statusText || `HTTP ${response.status}`;
    throw new HttpFailure(response.status, options.redact(message), {
      headers,
      body,
      rateLimited: options.rateLimited?.(response.status, headers, message) ?? false,
    });
  } catch (error) {
    return noAnswer(error);
  }
}

function parseJson(text: string, headers: Record<string, string>): unknown {
  if (!(headers['content-type'] ?? '').includes('json') || text === '') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One request of a `jsonApi`: query parameters, a JSON body, extra headers, the caller's signal. */
export interface JsonRequest {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Replace or add to the API's headers for this request (an `accept`, another `authorization`). */
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

/** A text request read line by line (a raw diff): see `readLines`. */
export interface LinesRequest extends JsonRequest {
  onLine: (line: string) => boolean | undefined;
  /** Longer lines are cut to this many characters (default 64 Ki). */
  maxLineLength?: number;
}

export interface JsonApi {
  /** A JSON request; the answer's body parsed. */
  <T = unknown>(method: 'GET' | 'POST', path: string, init?: JsonRequest): Promise<Answer<T>>;
  /** A GET whose text answer is read line by line, and only as far as `onLine` wants. */
  lines(path: string, init: LinesRequest): Promise<{ status: number; complete: boolean }>;
}

/**
 * A small client for a host's JSON API: requests to `base` + a path, with the host's headers
 * (computed per attempt, so that a renewed token is used on a retry), a JSON body when there is
 * one, the per-request timeout and the retry policy, answers read up to a bound, and failures
 * redacted.
 */
export function jsonApi(options: {
  base: string;
  /** The host's headers (auth, accept…); a function is asked again for every attempt. */
  headers: Record<string, string> | ((signal?: AbortSignal) => Promise<Record<string, string>>);
  fetch: typeof fetch;
  policy: RetryPolicy;
  timeoutMs: number;
  redact: Redact;
  rateLimited?: RateLimitTest;
  /** Asked before every request; what it throws goes to the caller, untried again (the address guard). */
  checkUrl?: (url: URL) => Promise<void>;
}): JsonApi {
  const { policy, redact } = options;
  const urlOf = (path: string, query: JsonRequest['query']) => {
    const url = new URL(`${options.base}${path}`);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  };
  const headersFor = async (init: JsonRequest) => ({
    accept: 'application/json',
    ...(typeof options.headers === 'function' ? await options.headers(init.signal) : options.headers),
    ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...init.headers,
  });
  const attempt = async <T>(
    method: string,
    path: string,
    init: JsonRequest,
    read: (response: Response, headers: Record<string, string>) => Promise<T>,
  ) => {
    const url = urlOf(path, init.query);
    await options.checkUrl?.(url);
    return exchange(
      {
        fetch: options.fetch,
        url,
        init: {
          method,
          headers: await headersFor(init),
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
        },
        signal: init.signal,
        timeoutMs: options.timeoutMs,
        redact,
        rateLimited: options.rateLimited,
        checkUrl: options.checkUrl,
      },
      read,
    );
  };

  // The one place a host's JSON takes the type its caller knows: the hosts' own files read their
  // answers as `request<Type>(…)`, without casts.
  const api = <T = unknown>(
    method: 'GET' | 'POST',
    path: string,
    init: JsonRequest = {},
  ): Promise<Answer<T>> =>
    withRetry(
      () =>
        attempt(method, path, init, async (response, headers) => {
          const { text, complete } = await readBounded(response.body, MAX_JSON_BYTES);
          if (!complete) {
            throw new HttpFailure(
              response.status,
              `the answer to ${method} ${path} is larger than ${MAX_JSON_BYTES / 1024 / 1024} MiB`,
              { headers, tooLarge: true },
            );
          }
          return { status: response.status, headers, body: parseJson(text, headers) as T };
        }),
      policy,
      init.signal,
    );

  api.lines = (path: string, init: LinesRequest) =>
    withRetry(
      // A retry starts again from the first line: `onLine` is given each line once per attempt.
      () =>
        attempt('GET', path, init, async (response) => {
          const { complete } = await readLines(response.body, init.onLine, init.maxLineLength ?? 64 * 1024);
          return { status: response.status, complete };
        }),
      policy,
      init.signal,
    );
  return api;
}

/**
 * Whether a list has a page after this one: the `Link` header's `rel="next"` (GitHub, Gitea), else
 * GitLab's `x-next-page` or Gitea's `x-hasmore`, else a full page.
 */
export function hasNextPage(headers: Record<string, string>, count: number, perPage: number): boolean {
  const link = headers.link;
  if (link !== undefined) return /<[^>]*>\s*;\s*rel="?next"?/.test(link);
  const next = headers['x-next-page'];
  if (next !== undefined) return next.trim() !== '';
  const more = headers['x-hasmore'];
  if (more !== undefined) return more.trim().toLowerCase() === 'true';
  return count >= perPage;
}

/**
 * The items of a paged list, page after page (`page` from 1 and the host's size parameter),
 * until the host says there is no next page (`end`), `visit` answers `false` for an item
 * (`stopped`), or `maxPages` were read (`limit`).
 */
export async function eachPage<T>(
  api: JsonApi,
  path: string,
  options: {
    query?: Record<string, string | number | boolean | undefined>;
    /** The name of the page-size parameter: `per_page` (GitHub, GitLab) or `limit` (Gitea). */
    sizeParam: 'per_page' | 'limit';
    perPage: number;
    maxPages: number;
    signal?: AbortSignal | undefined;
    visit: (item: T) => boolean | undefined;
  },
): Promise<'end' | 'stopped' | 'limit'> {
  for (let page = 1; page <= options.maxPages; page++) {
    const answer = await api<T[]>('GET', path, {
      query: { ...options.query, [options.sizeParam]: options.perPage, page },
      signal: options.signal,
    });
    const items = Array.isArray(answer.body) ? answer.body : [];
    for (const item of items) if (options.visit(item) === false) return 'stopped';
    if (!hasNextPage(answer.headers, items.length, options.perPage)) return 'end';
  }
  return 'limit';
}
