/**
 * Models for the agent (docs/agent.mdx), through the Vercel AI SDK: `provider/model` ids resolved to
 * AI SDK language models with the keys and base URLs of the project or the environment.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { processSecrets } from '../redact.ts';
import { AgentFailure } from './types.ts';

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
