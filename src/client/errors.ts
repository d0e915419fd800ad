/**
 * The one error the client throws for anything the API (or the network on the way to it)
 * refuses: the problem+json fields of the response, plus `retryAfter` when the server said
 * when to come back. A caller's own abort is not an error of the API and is rethrown as is.
 */
import { parseRetryAfter } from '../retry.ts';

/** `Retry-After` in whole seconds, the unit of `DocwrightApiError.retryAfter`. */
function retryAfterSeconds(value: string | null): number | undefined {
  const ms = parseRetryAfter(value);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}

/** One offending input field of a validation error. */
export interface ApiFieldError {
  /** Dotted path such as `prompt` or `query.limit`. */
  field: string;
  message: string;
}

/** What a `DocwrightApiError` is made of. */
export interface DocwrightApiErrorInit {
  /** HTTP status; 0 when no response arrived (network error or timeout). */
  status: number;
  /** Stable slug: the problem's `code` (`rate-limited`, `job-not-found`…), `network-error`, `timeout`, or `http-<status>` for a response that is not problem+json. */
  code: string;
  /** The problem's `type` URI, when the response was problem+json. */
  type?: string | undefined;
  /** Short summary (the HTTP reason phrase for the API's problems). */
  title: string;
  /** Explanation for this occurrence, as the server wrote it. */
  detail: string;
  /** Each offending field, for validation errors. */
  errors?: ApiFieldError[] | undefined;
  /** Seconds the server asked the client to wait (`Retry-After` of a 429 or 503). */
  retryAfter?: number | undefined;
  /** `METHOD /path` of the request, for the message. */
  request: string;
  /** The underlying failure (a network error), kept as the error's `cause`. */
  cause?: unknown;
}

export class DocwrightApiError extends Error {
  /** HTTP status; 0 when no response arrived (network error or timeout). */
  readonly status: number;
  /** Stable slug: the problem's `code`, `network-error`, `timeout`, or `http-<status>`. */
  readonly code: string;
  /** The problem's `type` URI (undefined when the response was not problem+json). */
  readonly type: string | undefined;
  readonly title: string;
  readonly detail: string;
  /** Each offending field, for validation errors. */
  readonly errors: ApiFieldError[] | undefined;
  /** Seconds to wait before retrying, from `Retry-After` (429 and 503). */
  readonly retryAfter: number | undefined;
  /** `METHOD /path` of the failed request. */
  readonly request: string;

  constructor(init: DocwrightApiErrorInit) {
    const where = init.status === 0 ? init.code : `HTTP ${init.status} ${init.code}`;
    const retry = init.retryAfter !== undefined ? `; retry after ${init.retryAfter} s` : '';
    super(`${init.detail} (${where}${retry}; ${init.request})`, { cause: init.cause });
    this.name = 'DocwrightApiError';
    this.status = init.status;
    this.code = init.code;
    this.type = init.type;
    this.title = init.title;
    this.detail = init.detail;
    this.errors = init.errors;
    this.retryAfter = init.retryAfter;
    this.request = init.request;
  }
}

export const isDocwrightApiError = (error: unknown): error is DocwrightApiError =>
  error instanceof DocwrightApiError;

/** Removes every occurrence of `secret` from `text` (the API key must never reach a message). */
export function scrub(text: string, secret: string): string {
  return secret.length > 0 ? text.split(secret).join('***') : text;
}

const oneLine = (text: string, max = 300) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined;

/**
 * The error for a response that is not 2xx: its problem+json fields when it has them
 * (`error` is the Mintlify-compatible field), else the status and the start of the body.
 */
export async function errorFromResponse(
  response: Response,
  request: string,
  secret: string,
): Promise<DocwrightApiError> {
  const text = await response.text().catch(() => '');
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  const reason = response.statusText || `HTTP ${response.status}`;
  const detail = str(body?.detail) ?? str(body?.error) ?? str(body?.message) ?? (oneLine(text) || reason);
  const errors = Array.isArray(body?.errors)
    ? (body.errors as unknown[])
        .filter((e): e is ApiFieldError => {
          const f = e as ApiFieldError | null;
          return typeof f?.field === 'string' && typeof f.message === 'string';
        })
        .map((e) => ({ field: scrub(e.field, secret), message: scrub(e.message, secret) }))
    : undefined;
  return new DocwrightApiError({
    status: response.status,
    code: str(body?.code) ?? `http-${response.status}`,
    type: str(body?.type),
    title: scrub(str(body?.title) ?? reason, secret),
    detail: scrub(detail, secret),
    errors,
    retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
    request,
  });
}

/** The error for a request that got no response: a dropped connection, a refused one, a timeout. */
export function networkError(cause: unknown, request: string, secret: string, timedOut: boolean) {
  const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause : cause) : undefined;
  const message = reason ? `${reason.message}${'code' in reason ? ` (${String(reason.code)})` : ''}` : '';
  return new DocwrightApiError({
    status: 0,
    code: timedOut ? 'timeout' : 'network-error',
    title: timedOut ? 'Timeout' : 'Network error',
    detail: scrub(timedOut ? 'no response within the time limit' : `request failed: ${message}`, secret),
    request,
    cause,
  });
}
