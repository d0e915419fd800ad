/**
 * What a model API throws, classified (docs/agent.mdx): whether trying again may succeed, how long the
 * API asked to wait, and a message for people with anything key-like removed.
 */
import { APICallError } from 'ai';
import { processSecrets } from '../redact.ts';
import { parseRetryAfter } from '../retry.ts';
import { AgentFailure, type AgentFailureCode } from './types.ts';

export interface ModelErrorClassification {
  /** `model-auth-failed`, `model-unavailable`, `model-not-configured` (no such model) or `cancelled`; an AgentFailure keeps its code. */
  code: AgentFailureCode;
  /** Whether trying the same call again may succeed. */
  retryable: boolean;
  /** What the API asked us to wait (`retry-after-ms` or `retry-after`), when it said. */
  retryAfterMs?: number;
  /** For people: status and the provider's own words, with anything key-like removed. */
  message: string;
}

/**
 * The wait a model API asked for, in ms: OpenAI's `retry-after-ms` when it sent one, else
 * `Retry-After` (seconds or an HTTP date, read by the shared parser).
 */
export function requestedWaitMs(
  headers: Record<string, string> | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const lower: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value;
  const ms = lower['retry-after-ms'];
  if (ms !== undefined && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.ceil(value);
  }
  return parseRetryAfter(lower['retry-after'], now);
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

const isAbort = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');

/** The chain of causes, outermost first, unwrapping the AI SDK's RetryError to its last error. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    const record = current as { name?: unknown; lastError?: unknown; cause?: unknown };
    current =
      record.name === 'AI_RetryError' && record.lastError !== undefined ? record.lastError : record.cause;
  }
  return chain;
}

const describe = (error: unknown): string => {
  if (error instanceof Error) return error.message;
  if (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { message?: unknown }).message === 'string'
  ) {
    return (error as { message: string }).message;
  }
  return String(error);
};

function classifyStatus(
  status: number,
  providerMessage: string,
  retryAfterMs: number | undefined,
  retryableHint: boolean | undefined,
): ModelErrorClassification {
  const detail = processSecrets.redact(providerMessage).trim();
  const said = detail ? `: ${detail}` : '';
  if (status === 401 || status === 403) {
    return {
      code: 'model-auth-failed',
      retryable: false,
      message: `the model API rejected the credentials (HTTP ${status})${said}`,
    };
  }
  if (status === 404) {
    return {
      code: 'model-not-configured',
      retryable: false,
      message: `the model API has no such model (HTTP 404)${said}`,
    };
  }
  if (status === 429) {
    return {
      code: 'model-unavailable',
      retryable: true,
      retryAfterMs,
      message: `the model API is rate limiting requests (HTTP 429)${said}`,
    };
  }
  if (status >= 500 || status === 408 || status === 409 || retryableHint === true) {
    return {
      code: 'model-unavailable',
      retryable: true,
      retryAfterMs,
      message: `the model API failed (HTTP ${status})${said}`,
    };
  }
  return {
    code: 'model-unavailable',
    retryable: false,
    message: `the model API refused the request (HTTP ${status})${said}`,
  };
}

/**
 * Maps what the AI SDK throws to a failure code and whether to retry: 401/403 are
 * `model-auth-failed` and final; 429 is retryable with the API's `Retry-After`; 5xx, 408, 409 and
 * network failures are retryable; other 4xx are final. Messages never contain a key.
 */
export function classifyModelError(error: unknown): ModelErrorClassification {
  const chain = causes(error);
  for (const item of chain) {
    if (item instanceof AgentFailure)
      return { code: item.code, retryable: false, message: processSecrets.redact(item.message) };
  }
  if (chain.some(isAbort))
    return { code: 'cancelled', retryable: false, message: 'the model call was aborted' };

  for (const item of chain) {
    if (APICallError.isInstance(item)) {
      if (item.statusCode !== undefined) {
        return classifyStatus(
          item.statusCode,
          item.message,
          requestedWaitMs(item.responseHeaders),
          item.isRetryable,
        );
      }
      return {
        code: 'model-unavailable',
        retryable: item.isRetryable,
        message: `could not reach the model API: ${processSecrets.redact(item.message)}`,
      };
    }
    if (
      typeof item === 'object' &&
      item !== null &&
      (item as { name?: unknown }).name === 'AI_LoadAPIKeyError'
    ) {
      return {
        code: 'model-not-configured',
        retryable: false,
        message: processSecrets.redact(describe(item)),
      };
    }
  }

  // Errors reported inside a response stream (e.g. Anthropic's `overloaded_error` event).
  for (const item of chain) {
    const record = item as { statusCode?: unknown; isRetryable?: unknown; type?: unknown } | null;
    if (typeof record === 'object' && record !== null && typeof record.statusCode === 'number') {
      return classifyStatus(
        record.statusCode,
        describe(item),
        undefined,
        typeof record.isRetryable === 'boolean' ? record.isRetryable : undefined,
      );
    }
    if (typeof record === 'object' && record !== null && record.isRetryable === true) {
      return {
        code: 'model-unavailable',
        retryable: true,
        message: `the model API failed: ${processSecrets.redact(describe(item))}`,
      };
    }
  }

  for (const item of chain) {
    const code = (item as { code?: unknown } | null)?.code;
    const message = describe(item).toLowerCase();
    if (
      (typeof code === 'string' && NETWORK_CODES.has(code)) ||
      message === 'fetch failed' ||
      message === 'terminated' ||
      message.includes('socket hang up') ||
      message.includes('other side closed')
    ) {
      return {
        code: 'model-unavailable',
        retryable: true,
        message: `the connection to the model API failed: ${processSecrets.redact(describe(item))}`,
      };
    }
  }
  return {
    code: 'model-unavailable',
    retryable: false,
    message: `the model call failed: ${processSecrets.redact(describe(error))}`,
  };
}
