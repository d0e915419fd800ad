import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { isDatabaseUnavailable } from '../database-errors.ts';
import { DocwrightError, type ErrorCode } from '../errors.ts';

/** RFC 9457 problem details, plus `code` and the Mintlify-compatible `error`. */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.string().meta({ description: 'Stable slug, e.g. rate-limited, job-not-found, invalid-request.' }),
  error: z.string().meta({ description: 'One-line message (the field Mintlify-compatible clients read).' }),
  errors: z
    .array(z.object({ field: z.string(), message: z.string() }))
    .optional()
    .meta({ description: 'Each offending field of a validation error.' }),
});
export type Problem = z.output<typeof problemSchema>;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Fastify's own client errors, by their `code`. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported-media-type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload-too-large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid-json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid-json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid-request',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported-media-type',
  FST_ERR_BAD_URL: 'not-found',
  FST_ERR_MAX_PARAM_LENGTH: 'uri-too-long',
};

const fastifyMessages: Partial<Record<ErrorCode, string>> = {
  'unsupported-media-type': 'the request body must be application/json',
  'payload-too-large': 'the request body is too large',
  'not-found': 'no such resource',
  'uri-too-long': 'a path segment is too long',
};

const codeByStatus: Record<number, ErrorCode> = {
  400: 'invalid-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  413: 'payload-too-large',
  414: 'uri-too-long',
  415: 'unsupported-media-type',
  429: 'rate-limited',
  431: 'headers-too-large',
};

/** "256 KiB", "25 MiB": a body limit as the docs write it. */
function sizeText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** The 413 of a route whose bodies may be at most `limit` bytes (the API's 256 KiB, the hooks' 25 MiB). */
export const bodyTooLarge = (limit: number, cause?: unknown) =>
  new DocwrightError('payload-too-large', `the request body is larger than ${sizeText(limit)}`, { cause });

/**
 * Turns anything thrown while handling a request into a DocwrightError.
 * Unknown errors become a bare 500 whose message says nothing of internals;
 * the caller logs the original. `bodyLimit`: the route's, which a 413 names.
 */
export function toDocwrightError(error: unknown, bodyLimit?: number): DocwrightError {
  if (error instanceof DocwrightError) return error;
  if (isDatabaseUnavailable(error)) {
    return new DocwrightError('service-unavailable', 'the database is unavailable; retry shortly', {
      retryAfter: DATABASE_RETRY_AFTER_SECONDS,
      cause: error,
    });
  }
  const fastifyError = error as { code?: string; statusCode?: number; message?: string };
  const mapped = fastifyError.code ? fastifyCodes[fastifyError.code] : undefined;
  if (mapped === 'payload-too-large' && bodyLimit !== undefined) return bodyTooLarge(bodyLimit, error);
  if (mapped) {
    const message =
      mapped === 'invalid-json'
        ? `the request body is not valid JSON${fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? ' (it is empty)' : ''}`
        : (fastifyMessages[mapped] ?? 'invalid request');
    return new DocwrightError(mapped, message, { cause: error });
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = codeByStatus[status] ?? 'invalid-request';
    return new DocwrightError(code, STATUS_CODES[status] ?? 'invalid request', { cause: error });
  }
  return new DocwrightError('internal-error', 'an internal error occurred; it has been logged', {
    cause: error,
  });
}

export function problemBody(error: DocwrightError): Problem {
  const problem: Problem = {
    type: `urn:docwright:problem:${error.code}`,
    title: STATUS_CODES[error.status] ?? 'Error',
    status: error.status,
    detail: error.message,
    code: error.code,
    error: error.message,
  };
  if (error.fields?.length) problem.errors = error.fields;
  return problem;
}

/** The one place an error becomes an HTTP response. */
export function sendProblem(reply: FastifyReply, error: DocwrightError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="docwright"');
  return reply.status(error.status).type(PROBLEM_CONTENT_TYPE).send(problemBody(error));
}
