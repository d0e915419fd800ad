/** Prompt caching: where a request marks cache breakpoints for the providers that need them. */
import type { ModelMessage, SystemModelMessage } from 'ai';

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
