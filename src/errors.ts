/**
 * The one error type of docwright. Domain code throws it with a stable `code`;
 * the HTTP layer renders it as problem+json and the CLI as a one-line message,
 * each in a single place.
 */

/** Every stable error code and the HTTP status it maps to. */
export const errorStatus = {
  'invalid-request': 400,
  'invalid-json': 400,
  'invalid-cursor': 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  'project-not-found': 404,
  'job-not-found': 404,
  'automation-not-found': 404,
  'key-not-found': 404,
  'diff-not-found': 404,
  'webhook-not-found': 404,
  'delivery-not-found': 404,
  'context-repository-not-found': 404,
  'method-not-allowed': 405,
  'job-busy': 409,
  'branch-exists': 409,
  'job-archived': 409,
  'job-not-failed': 409,
  'idempotency-key-in-use': 409,
  'operator-exists': 409,
  'webhook-disabled': 409,
  'context-repository-exists': 409,
  'too-many-context-repositories': 409,
  'payload-too-large': 413,
  'uri-too-long': 414,
  'unsupported-media-type': 415,
  'expectation-failed': 417,
  'idempotency-key-mismatch': 422,
  'rate-limited': 429,
  'too-many-streams': 429,
  'token-budget-exceeded': 429,
  'headers-too-large': 431,
  'internal-error': 500,
  'service-unavailable': 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** What the `RateLimit` headers report (docs/api/rate-limits.mdx). */
export interface RateLimitState {
  /** Uses allowed per window. */
  limit: number;
  /** Uses left right now. */
  remaining: number;
  /** Seconds until the oldest use in the window frees up (0 when none is used). */
  resetSeconds: number;
}

/** One offending input field: `field` is a dotted path such as `prompt` or `query.limit`. */
export interface FieldError {
  field: string;
  message: string;
}

export interface DocwrightErrorOptions {
  /** Per-field validation problems, listed in the response. */
  fields?: FieldError[];
  /** Seconds after which the client may retry (sent as `Retry-After`). */
  retryAfter?: number;
  /** The project's rate-limit state, for responses that report it. */
  rateLimit?: RateLimitState;
  cause?: unknown;
}

export class DocwrightError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields: FieldError[] | undefined;
  readonly retryAfter: number | undefined;
  readonly rateLimit: RateLimitState | undefined;

  constructor(code: ErrorCode, message: string, options: DocwrightErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'DocwrightError';
    this.code = code;
    this.status = errorStatus[code];
    this.fields = options.fields;
    this.retryAfter = options.retryAfter;
    this.rateLimit = options.rateLimit;
  }
}

export const isDocwrightError = (error: unknown): error is DocwrightError => error instanceof DocwrightError;
