/**
 * Models for the agent (docs/agent.mdx), through the Vercel AI SDK: resolving `provider/model` ids to
 * AI SDK language models, classifying what a model API throws, retrying rate limits and
 * transient failures inside the run's time budget, and marking prompts for provider caching.
 *
 * Calls made through this module should pass `maxRetries: 0` to the AI SDK: `withModelRetries`
 * is the one retry loop, so that `Retry-After` is honoured and no wait outlives the budget.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, type LanguageModel, type ModelMessage, type SystemModelMessage } from 'ai';
import { processSecrets } from '../redact.ts';
import { parseRetryAfter, retry } from '../retry.ts';
import { AgentFailure, type AgentFailureCode } from './types.ts';

/** A language model object (never a gateway id string). */
export type Model = Exclude<LanguageModel, string>;

export type ModelProvider = 'anthropic' | 'openai' | 'openai-compatible';

export interface ResolveModelOptions {
  /** Where keys and base URLs are read from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** The project's base URL for `openai-compatible/…`; wins over `DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL`. */
  openaiCompatibleBaseUrl?: string | null;
  /** Keys from the project's encrypted settings; each wins over its environment variable. */
  apiKeys?: { anthropic?: string; openai?: string; openaiCompatible?: string };
  /** Custom fetch (tests, instrumentation). */
  fetch?: typeof fetch;
  /** Base URLs for proxies and tests; win over `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`. */
  baseUrls?: { anthropic?: string; openai?: string };
}

const PROVIDERS: readonly ModelProvider[] = ['anthropic', 'openai', 'openai-compatible'];

const KEY_VARIABLES = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  'openai-compatible': 'DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY',
} as const;

const DEFAULT_BASE_URLS = {
  anthropic: 'https://api.anthropic.com/v1',
  openai: 'https://api.openai.com/v1',
} as const;

const notConfigured = (message: string) => new AgentFailure('model-not-configured', message);

const present = (value: string | null | undefined): string | undefined => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
};

/** Splits `provider/model` at the first slash (model names may contain more, e.g. `meta-llama/…`). */
export function parseModelId(modelId: string): { provider: ModelProvider; model: string } {
  const id = modelId.trim();
  if (id === '') {
    throw notConfigured('no model is configured: set DOCWRIGHT_MODEL, or the project or request model');
  }
  const slash = id.indexOf('/');
  const provider = slash < 0 ? '' : id.slice(0, slash);
  const model = slash < 0 ? '' : id.slice(slash + 1).trim();
  if (!PROVIDERS.includes(provider as ModelProvider)) {
    throw notConfigured(
      `unknown model provider in "${id}": use anthropic/<model>, openai/<model> or openai-compatible/<model>`,
    );
  }
  if (model === '') throw notConfigured(`model id "${id}" names no model after the provider`);
  return { provider: provider as ModelProvider, model };
}

/**
 * Accepts an http(s) URL and returns it without a trailing slash; a bare origin gets `/v1`
 * (what the Anthropic and OpenAI SDKs, Ollama, vLLM and LM Studio all serve under).
 */
function normalizeBaseUrl(value: string, setting: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw notConfigured(`${setting} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw notConfigured(`${setting} must be an http(s) URL`);
  const text = value.trim().replace(/\/+$/, '');
  return url.pathname === '/' || url.pathname === '' ? `${text}/v1` : text;
}

function requireKey(provider: 'anthropic' | 'openai', modelId: string, key: string | undefined): string {
  if (key === undefined) {
    throw notConfigured(
      `model "${modelId}" needs an API key: set ${KEY_VARIABLES[provider]} or the project's ${provider} key`,
    );
  }
  return key;
}

/**
 * Resolves `anthropic/…`, `openai/…` or `openai-compatible/…` to an AI SDK language model.
 * Throws `AgentFailure('model-not-configured')` for an empty id, an unknown provider, a missing
 * key (naming the variable, never a value) or an `openai-compatible` model without a base URL.
 * `openai/…` uses the Chat Completions API; `openai-compatible/…` needs no key (Ollama, llama.cpp).
 */
export function resolveModel(modelId: string, options: ResolveModelOptions = {}): Model {
  const env = options.env ?? process.env;
  const { provider, model } = parseModelId(modelId);
  const id = `${provider}/${model}`;
  switch (provider) {
    case 'anthropic': {
      const apiKey = requireKey(
        provider,
        id,
        present(options.apiKeys?.anthropic) ?? present(env.ANTHROPIC_API_KEY),
      );
      processSecrets.add(apiKey);
      const override = present(options.baseUrls?.anthropic) ?? present(env.ANTHROPIC_BASE_URL);
      return createAnthropic({
        apiKey,
        baseURL: override ? normalizeBaseUrl(override, 'ANTHROPIC_BASE_URL') : DEFAULT_BASE_URLS.anthropic,
        fetch: options.fetch,
      })(model);
    }
    case 'openai': {
      const apiKey = requireKey(
        provider,
        id,
        present(options.apiKeys?.openai) ?? present(env.OPENAI_API_KEY),
      );
      processSecrets.add(apiKey);
      const override = present(options.baseUrls?.openai) ?? present(env.OPENAI_BASE_URL);
      return createOpenAI({
        apiKey,
        baseURL: override ? normalizeBaseUrl(override, 'OPENAI_BASE_URL') : DEFAULT_BASE_URLS.openai,
        fetch: options.fetch,
      }).chat(model);
    }
    case 'openai-compatible': {
      const baseUrl =
        present(options.openaiCompatibleBaseUrl) ?? present(env.DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL);
      if (baseUrl === undefined) {
        throw notConfigured(
          `model "${id}" needs a base URL: set DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL or the project's OpenAI-compatible base URL`,
        );
      }
      const apiKey =
        present(options.apiKeys?.openaiCompatible) ?? present(env.DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY);
      if (apiKey) processSecrets.add(apiKey);
      return createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: normalizeBaseUrl(baseUrl, 'the OpenAI-compatible base URL'),
        apiKey,
        includeUsage: true,
        fetch: options.fetch,
      }).chatModel(model);
    }
  }
}

/**
 * How a project's runs resolve their model: the project's OpenAI-compatible base URL and its own
 * keys, each winning over the environment's. The worker and `docwright doctor` both use this, so
 * that the doctor checks exactly what a job will call.
 */
/** The environment variables models are configured by (keys and base URLs), and only those. */
export function modelEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const names = [
    ...Object.values(KEY_VARIABLES),
    'ANTHROPIC_BASE_URL',
    'OPENAI_BASE_URL',
    'DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL',
  ];
  return Object.fromEntries(names.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]));
}

export function projectModelOptions(
  project: { settings: { openaiCompatibleBaseUrl: string | null } },
  secrets: { anthropicApiKey?: string; openaiApiKey?: string; openaiCompatibleApiKey?: string },
  env: NodeJS.ProcessEnv = process.env,
): ResolveModelOptions {
  return {
    env,
    openaiCompatibleBaseUrl: project.settings.openaiCompatibleBaseUrl,
    apiKeys: {
      anthropic: secrets.anthropicApiKey,
      openai: secrets.openaiApiKey,
      openaiCompatible: secrets.openaiCompatibleApiKey,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Errors

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

// ---------------------------------------------------------------------------------------------
// Retries

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

// ---------------------------------------------------------------------------------------------
// Prompt caching

/**
 * Provider options that make a message or tool a prompt-cache breakpoint. Anthropic caches
 * only where asked (at most four breakpoints a request); OpenAI and most OpenAI-compatible
 * servers cache prompt prefixes on their own and ignore this.
 */
export const CACHE_BREAKPOINT = { anthropic: { cacheControl: { type: 'ephemeral' } } } as const;

/** The system prompt as a cache breakpoint: pass it as `instructions` (caches tools + system). */
export function cachedInstructions(text: string): SystemModelMessage {
  return { role: 'system', content: text, providerOptions: CACHE_BREAKPOINT };
}

/**
 * A copy of `messages` whose last message is a cache breakpoint, so the next call reads the
 * conversation so far from the cache (use in `prepareStep`, or before each call of a manual
 * loop). The input is left untouched, so breakpoints do not pile up over a run.
 */
export function withCachedConversation(messages: ModelMessage[]): ModelMessage[] {
  const last = messages.at(-1);
  if (last === undefined) return messages;
  const marked = {
    ...last,
    providerOptions: {
      ...last.providerOptions,
      anthropic: { ...last.providerOptions?.anthropic, ...CACHE_BREAKPOINT.anthropic },
    },
  } as ModelMessage;
  return [...messages.slice(0, -1), marked];
}
