/**
 * What the code-host implementations share: the HTTP failure they classify,
 * retries with backoff, the mapping to stable `HostError` codes, redaction of
 * secrets, and the parsing of repository URLs.
 */
import type { ProjectView } from '../../projects/projects.ts';
import {
  type CodeHost,
  HostError,
  type HostErrorCode,
  type PullRequest,
  type PullRequestInput,
} from './host.ts';

/** The project fields a host needs. */
export type HostProject = Pick<ProjectView, 'host' | 'repository' | 'apiUrl'>;

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

export interface HostOptions {
  /** The fetch the host's HTTP client uses (tests, proxies). */
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  /** The clock that decides when cached tokens are renewed (tests). */
  now?: () => number;
}

/**
 * What git sends over HTTPS: the token as the password of a host-specific
 * user name (the same shape as `GitCredentials` in ../credentials.ts).
 */
export interface GitCredentials {
  username: string;
  token: string;
}

export interface HostPullRequest extends PullRequest {
  /** Things worth telling the user that did not stop the pull request (a skipped label…). */
  notes: string[];
}

/** A code host with an HTTP API (every kind but `local`). */
export interface ApiCodeHost extends CodeHost {
  readonly kind: 'github' | 'gitlab' | 'gitea';
  ensurePullRequest(input: PullRequestInput, signal?: AbortSignal): Promise<HostPullRequest>;
  /** The credentials git should use, or null when the project has none (public read only). */
  gitCredentials(signal?: AbortSignal): Promise<GitCredentials | null>;
}

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

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

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

export function retryPolicy(options: HostOptions): RetryPolicy {
  return { ...DEFAULT_RETRY, ...options.retry };
}

/**
 * Runs `operation`, trying again on retryable `HttpFailure`s with exponential
 * backoff (or the wait the host asked for), at most `policy.attempts` times.
 */
export async function withRetry<T>(
  operation: () => Promise<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!(error instanceof HttpFailure) || !error.retryable || attempt >= policy.attempts) throw error;
      if (signal?.aborted) throw signal.reason;
      const hinted = hintedDelayMs(error.headers);
      if (hinted !== undefined && hinted > policy.maxDelayMs) throw error;
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      await sleep(hinted ?? backoff * (0.5 + Math.random() / 2), signal);
    }
  }
}

/** Replaces every known secret in `text`. */
export function redact(text: string, secrets: Iterable<string | undefined>): string {
  let result = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) result = result.split(secret).join('[REDACTED]');
  }
  return result;
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
export async function sendJson(
  fetchImpl: typeof fetch,
  url: URL | string,
  init: { method: string; headers: Record<string, string>; body?: string | undefined },
  options: { signal?: AbortSignal | undefined; timeoutMs: number; secrets: Iterable<string | undefined> },
): Promise<Answer> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
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
    throw new HttpFailure(undefined, redact(reason, options.secrets));
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
    throw new HttpFailure(response.status, redact(message, options.secrets), { headers, body });
  }
  return { status: response.status, headers, body };
}

export interface FailureContext {
  /** The host's display name, e.g. `GitHub (api.github.com)`. */
  host: string;
  /** What was being done, e.g. `open a pull request for docwright/abc`. */
  action: string;
  /** The code for failures that are not about credentials or permissions. */
  fallback: HostErrorCode;
  /** The code for a 404 (what was not there: the repository or a branch). */
  notFound: HostErrorCode;
  /** Said after a 404. */
  notFoundMessage?: string;
  secrets: Iterable<string | undefined>;
}

/** Binds a host's name and secrets, so each call site names only what it was doing. */
export function failureContexts(host: string, secrets: Iterable<string | undefined>) {
  return (
    action: string,
    fallback: HostErrorCode,
    notFound: HostErrorCode,
    notFoundMessage?: string,
  ): FailureContext => ({
    host,
    action,
    fallback,
    notFound,
    notFoundMessage,
    secrets,
  });
}

/** The stable error for a failure; never carries a secret, nor the HTTP client's request. */
export function toHostError(error: unknown, context: FailureContext): HostError {
  if (error instanceof HostError) return error;
  const clean = (text: string) => redact(text, context.secrets);
  if (!(error instanceof HttpFailure)) {
    const message = error instanceof Error ? error.message : String(error);
    return new HostError(
      context.fallback,
      clean(`could not ${context.action} on ${context.host}: ${message}`),
    );
  }
  const detail = error.message ? `: ${clean(error.message)}` : '';
  const status = error.status;
  const prefix = `could not ${context.action} on ${context.host}`;
  const cause = new HttpFailure(status, clean(error.message), { headers: error.headers });
  if (status === undefined) {
    return new HostError(context.fallback, `${prefix}: no answer (${clean(error.message)})`, {
      retryable: true,
      cause,
    });
  }
  if (error.retryable) {
    const wait = hintedDelayMs(error.headers);
    const after = wait !== undefined ? `; try again in ${Math.ceil(wait / 1000)} s` : '';
    const what = status === 429 || error.rateLimited ? 'rate limited' : `HTTP ${status}`;
    return new HostError(context.fallback, `${prefix}: ${what}${detail}${after}`, { retryable: true, cause });
  }
  if (status === 401) {
    return new HostError('host-auth-failed', `${prefix}: the credentials were rejected (401)${detail}`, {
      cause,
    });
  }
  if (status === 403) {
    return new HostError(
      'host-permission-denied',
      `${prefix}: the credentials lack the permission (403)${detail}`,
      { cause },
    );
  }
  if (status === 404) {
    const what = context.notFoundMessage ? `: ${context.notFoundMessage}` : '';
    return new HostError(context.notFound, `${prefix}: not found (404)${what}${detail}`, { cause });
  }
  return new HostError(context.fallback, `${prefix}: HTTP ${status}${detail}`, { cause });
}

export interface RemoteRepository {
  /** The normalised web URL (no `.git`). */
  url: string;
  /** `https://host[:port]`. */
  origin: string;
  /** Path segments of the repository (owner, name; GitLab: the whole namespace path). */
  segments: string[];
}

/** Splits a project's repository URL (already normalised by projects/repository.ts). */
export function parseRemoteRepository(repository: string): RemoteRepository {
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    throw new HostError('ref-not-found', `repository ${repository} is not a URL`);
  }
  const pathname = url.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
  const segments = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (segments.length < 2) {
    throw new HostError('ref-not-found', `repository ${repository} does not name owner/repository`);
  }
  return { url: `${url.origin}${pathname}`, origin: url.origin, segments };
}

/** An API base without its trailing slash. */
export const trimSlash = (url: string) => url.replace(/\/+$/, '');
