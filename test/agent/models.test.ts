import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateText, isStepCount, type ModelMessage, streamText, tool } from 'ai';
import { z } from 'zod';
import { classifyModelError, requestedWaitMs } from '../../src/agent/model-errors.ts';
import { type Model, type ResolveModelOptions, resolveModel } from '../../src/agent/model-resolution.ts';
import { withModelRetries } from '../../src/agent/model-retries.ts';
import { cachedInstructions, withCachedConversation } from '../../src/agent/prompt-cache.ts';
import { AgentFailure } from '../../src/agent/types.ts';
import { startAnthropicServer } from '../doubles/anthropic-server.ts';
import {
  httpError,
  type RecordedRequest,
  rateLimited,
  reply,
  type ScriptedServer,
  startOpenAIServer,
  toolCall,
} from '../doubles/openai-server.ts';

globalThis.AI_SDK_LOG_WARNINGS = false;

const ANTHROPIC_KEY = 'sk-ant-test-0123456789abcdef';
const OPENAI_KEY = 'sk-test-openai-0123456789abcdef';
const COMPATIBLE_KEY = 'local-key-0123456789';
const SYSTEM = 'You edit documentation.';

type Flavour = 'anthropic' | 'openai' | 'openai-compatible';
const FLAVOURS: Flavour[] = ['anthropic', 'openai', 'openai-compatible'];

interface Setup {
  server: ScriptedServer;
  model: Model;
}

/** A double of the flavour's API and a model pointed at it through the production code path. */
async function setup(flavour: Flavour, options: { key?: string } = {}): Promise<Setup> {
  if (flavour === 'anthropic') {
    const server = await startAnthropicServer({ apiKey: ANTHROPIC_KEY });
    const model = resolveModel('anthropic/claude-sonnet-4-5', {
      env: { ANTHROPIC_API_KEY: options.key ?? ANTHROPIC_KEY, ANTHROPIC_BASE_URL: server.baseUrl },
    });
    return { server, model };
  }
  if (flavour === 'openai') {
    const server = await startOpenAIServer({ apiKey: OPENAI_KEY });
    const model = resolveModel('openai/gpt-4.1', {
      env: {},
      apiKeys: { openai: options.key ?? OPENAI_KEY },
      baseUrls: { openai: server.baseUrl },
    });
    return { server, model };
  }
  const server = await startOpenAIServer({ apiKey: COMPATIBLE_KEY });
  const model = resolveModel('openai-compatible/qwen2.5-coder:7b', {
    env: { DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY: options.key ?? COMPATIBLE_KEY },
    // A bare origin, as people paste it for Ollama: resolveModel adds /v1.
    openaiCompatibleBaseUrl: server.url,
  });
  return { server, model };
}

const tools = {
  add: tool({
    description: 'Adds two numbers.',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => String(a + b),
  }),
};

interface Completion {
  text: string;
  steps: number;
  inputTokens: number;
  outputTokens: number;
}

/** One agent-style call: streaming or not, tools offered, no SDK retries, errors thrown. */
async function complete(
  model: Model,
  options: { stream: boolean; signal?: AbortSignal; maxSteps?: number; messages?: ModelMessage[] },
): Promise<Completion> {
  const common = {
    model,
    instructions: cachedInstructions(SYSTEM),
    messages: options.messages ?? [{ role: 'user' as const, content: 'What is 2 + 3?' }],
    tools,
    stopWhen: isStepCount(options.maxSteps ?? 1),
    maxRetries: 0,
    abortSignal: options.signal,
  };
  if (!options.stream) {
    const result = await generateText(common);
    return {
      text: result.text,
      steps: result.steps.length,
      inputTokens: result.totalUsage.inputTokens ?? 0,
      outputTokens: result.totalUsage.outputTokens ?? 0,
    };
  }
  const result = streamText({ ...common, onError: () => {} });
  for await (const part of result.fullStream) if (part.type === 'error') throw part.error;
  const usage = await result.totalUsage;
  return {
    text: await result.text,
    steps: (await result.steps).length,
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
  };
}

/** The tool names a request offered, in either wire format. */
const offeredTools = (request: RecordedRequest): string[] =>
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON.
  (request.body.tools ?? []).map((t: any) => t.name ?? t.function?.name);

/** The tool results a request returned to the model: [id, content] pairs. */
function toolResults(request: RecordedRequest): [string, unknown][] {
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON.
  const messages: any[] = request.body.messages;
  if (request.path === '/v1/messages') {
    return messages
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b) => b.type === 'tool_result')
      .map((b) => [b.tool_use_id, b.content]);
  }
  return messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]);
}

/** The id of the tool call the scripted model made, as the production code echoed it back. */
function toolCallIds(request: RecordedRequest): string[] {
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON.
  const messages: any[] = request.body.messages;
  if (request.path === '/v1/messages') {
    return messages
      .filter((m) => m.role === 'assistant' && Array.isArray(m.content))
      .flatMap((m) =>
        m.content.filter((b: { type: string }) => b.type === 'tool_use').map((b: { id: string }) => b.id),
      );
  }
  return messages.flatMap((m) => (m.tool_calls ?? []).map((c: { id: string }) => c.id));
}

const keyIn = (flavour: Flavour, request: RecordedRequest): string | undefined =>
  flavour === 'anthropic' ? request.headers['x-api-key'] : request.headers.authorization;

const expectedKeyHeader = (flavour: Flavour): string =>
  flavour === 'anthropic' ? ANTHROPIC_KEY : `Bearer ${flavour === 'openai' ? OPENAI_KEY : COMPATIBLE_KEY}`;

const retriesWithin = (ms: number) => ({ deadline: Date.now() + ms, initialDelayMs: 10 });

async function failure(promise: Promise<unknown>): Promise<AgentFailure> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AgentFailure, `expected an AgentFailure, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

for (const flavour of FLAVOURS) {
  for (const stream of [false, true]) {
    describe(`${flavour}, ${stream ? 'streaming' : 'not streaming'}`, { concurrency: true }, () => {
      test('a tool call round trip: the tool is offered, its result goes back with the call id', async (t) => {
        const { server, model } = await setup(flavour);
        t.after(() => server.close());
        server.push(toolCall('add', { a: 2, b: 3 }), reply('2 + 3 = 5.'));

        const result = await complete(model, { stream, maxSteps: 4 });

        assert.equal(result.text, '2 + 3 = 5.');
        assert.equal(result.steps, 2);
        assert.ok(result.inputTokens > 0 && result.outputTokens > 0, 'usage is reported');
        assert.equal(server.requests.length, 2);
        const [first, second] = server.requests as [RecordedRequest, RecordedRequest];
        assert.deepEqual(offeredTools(first), ['add']);
        assert.equal(first.body.stream === true, stream);
        const [callId] = toolCallIds(second);
        assert.ok(callId, 'the assistant tool call is replayed');
        assert.deepEqual(toolResults(second), [[callId, '5']]);
        for (const request of server.requests)
          assert.equal(keyIn(flavour, request), expectedKeyHeader(flavour));
        if (flavour === 'anthropic') {
          assert.ok(first.headers['anthropic-version']);
          assert.deepEqual(first.body.system, [
            { type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } },
          ]);
        } else {
          assert.deepEqual(first.body.messages[0], { role: 'system', content: SYSTEM });
          if (stream) assert.deepEqual(first.body.stream_options, { include_usage: true });
        }
      });

      test('429 is retried after Retry-After, then succeeds', async (t) => {
        const { server, model } = await setup(flavour);
        t.after(() => server.close());
        server.push(rateLimited(0), reply('ok'));
        const retries: [number, number, string][] = [];

        const result = await withModelRetries((signal) => complete(model, { stream, signal }), {
          ...retriesWithin(10_000),
          onRetry: (attempt, waitMs, reason) => {
            retries.push([attempt, waitMs, reason]);
          },
        });

        assert.equal(result.text, 'ok');
        assert.equal(server.requests.length, 2);
        assert.equal(retries.length, 1);
        assert.equal(retries[0]?.[1], 0, 'waits what retry-after said, not the backoff');
        assert.match(retries[0]?.[2] ?? '', /429/);
      });

      test('500 is retried with backoff, then succeeds', async (t) => {
        const { server, model } = await setup(flavour);
        t.after(() => server.close());
        server.push(httpError(500), httpError(flavour === 'anthropic' ? 529 : 503), reply('ok'));
        const waits: number[] = [];

        const result = await withModelRetries((signal) => complete(model, { stream, signal }), {
          ...retriesWithin(10_000),
          onRetry: (_attempt, waitMs) => {
            waits.push(waitMs);
          },
        });

        assert.equal(result.text, 'ok');
        assert.equal(server.requests.length, 3);
        assert.equal(waits.length, 2);
        assert.ok(waits[0]! >= 5 && waits[0]! <= 10, `first backoff ${waits[0]} is 10 ms with jitter`);
        assert.ok(waits[1]! >= 10 && waits[1]! <= 20, `second backoff ${waits[1]} doubles`);
      });

      test('a rejected key fails at once with model-auth-failed and no retry', async (t) => {
        const wrongKey = `sk-wrong-${flavour}-abcdefghijklmnop`;
        const { server, model } = await setup(flavour, { key: wrongKey });
        t.after(() => server.close());
        server.push(reply('never played'));

        const error = await failure(
          withModelRetries((signal) => complete(model, { stream, signal }), retriesWithin(10_000)),
        );

        assert.equal(error.code, 'model-auth-failed');
        assert.equal(server.requests.length, 1);
        assert.equal(server.requests[0]?.status, 401);
        assert.ok(!error.message.includes(wrongKey.slice(-8)), `no key in: ${error.message}`);
        assert.ok(!error.message.includes('sk-wrong'), `no key prefix in: ${error.message}`);
      });
    });
  }
}

describe('Retry-After is honoured in real time', { concurrency: true }, () => {
  for (const flavour of ['anthropic', 'openai'] as const) {
    test(`${flavour}: retry-after: 1 waits at least a second`, async (t) => {
      const { server, model } = await setup(flavour);
      t.after(() => server.close());
      server.push(rateLimited(1), reply('ok'));

      const result = await withModelRetries(
        (signal) => complete(model, { stream: false, signal }),
        retriesWithin(10_000),
      );

      assert.equal(result.text, 'ok');
      const [first, second] = server.requests as [RecordedRequest, RecordedRequest];
      // The wait starts after the 429 arrives, so the gap is at least the full second
      // (less a few ms for timer and clock granularity).
      assert.ok(
        second.receivedAt - first.receivedAt >= 995,
        `gap ${second.receivedAt - first.receivedAt} ms`,
      );
    });
  }

  test('openai: retry-after-ms wins over retry-after', async (t) => {
    const { server, model } = await setup('openai');
    t.after(() => server.close());
    server.push(rateLimited(30, { 'retry-after-ms': '150' }), reply('ok'));
    const waits: number[] = [];

    await withModelRetries((signal) => complete(model, { stream: true, signal }), {
      ...retriesWithin(10_000),
      onRetry: (_attempt, waitMs) => {
        waits.push(waitMs);
      },
    });

    assert.deepEqual(waits, [150]);
    const [first, second] = server.requests as [RecordedRequest, RecordedRequest];
    assert.ok(second.receivedAt - first.receivedAt >= 145);
  });
});

describe('the time budget and cancellation', { concurrency: true }, () => {
  test('a Retry-After past the deadline fails at once instead of sleeping', async (t) => {
    const { server, model } = await setup('anthropic');
    t.after(() => server.close());
    server.push(rateLimited(60));
    const started = Date.now();

    const error = await failure(
      withModelRetries((signal) => complete(model, { stream: false, signal }), retriesWithin(5_000)),
    );

    assert.equal(error.code, 'model-unavailable');
    assert.match(error.message, /time limit/);
    assert.ok(Date.now() - started < 1_000);
    assert.equal(server.requests.length, 1);
  });

  test('the deadline passing during a call is budget-exceeded', async (t) => {
    const { server, model } = await setup('openai');
    t.after(() => server.close());
    server.push(reply('too late', { delayMs: 2_000 }));
    const started = Date.now();

    const error = await failure(
      withModelRetries((signal) => complete(model, { stream: true, signal }), retriesWithin(200)),
    );

    assert.equal(error.code, 'budget-exceeded');
    assert.ok(Date.now() - started < 1_000);
  });

  test('aborting the signal during a wait ends promptly with cancelled', async (t) => {
    const { server, model } = await setup('openai');
    t.after(() => server.close());
    server.push(rateLimited(20), reply('never'));
    const controller = new AbortController();
    const started = Date.now();

    const pending = withModelRetries((signal) => complete(model, { stream: false, signal }), {
      ...retriesWithin(60_000),
      signal: controller.signal,
      onRetry: () => {
        setTimeout(() => controller.abort(), 50);
      },
    });
    const error = await failure(pending);

    assert.equal(error.code, 'cancelled');
    assert.ok(Date.now() - started < 1_000);
    assert.equal(server.requests.length, 1);
  });

  test('aborting the signal during a call ends it with cancelled', async (t) => {
    const { server, model } = await setup('anthropic');
    t.after(() => server.close());
    server.push(reply('slow', { delayMs: 2_000 }));
    const signal = AbortSignal.timeout(100);

    const error = await failure(
      withModelRetries((s) => complete(model, { stream: true, signal: s }), {
        ...retriesWithin(60_000),
        signal,
      }),
    );

    assert.equal(error.code, 'cancelled');
  });

  test('an unreachable server is retried, then reported as model-unavailable', async () => {
    const { server, model } = await setup('openai');
    await server.close();
    const attempts: number[] = [];

    const error = await failure(
      withModelRetries((signal) => complete(model, { stream: false, signal }), {
        ...retriesWithin(10_000),
        maxAttempts: 3,
        onRetry: (attempt) => {
          attempts.push(attempt);
        },
      }),
    );

    assert.equal(error.code, 'model-unavailable');
    assert.deepEqual(attempts, [1, 2]);
    assert.match(error.message, /gave up after 3 attempts/);
  });

  test('an error event inside an Anthropic stream (overloaded) is retried', async (t) => {
    const { server, model } = await setup('anthropic');
    t.after(() => server.close());
    server.push(reply('lost', { streamError: { type: 'overloaded_error' } }), reply('ok'));
    const reasons: string[] = [];

    const result = await withModelRetries((signal) => complete(model, { stream: true, signal }), {
      ...retriesWithin(10_000),
      onRetry: (_attempt, _waitMs, reason) => {
        reasons.push(reason);
      },
    });

    assert.equal(result.text, 'ok');
    assert.equal(server.requests.length, 2);
    assert.equal(reasons.length, 1);
  });

  test('a dropped OpenAI stream is retried', async (t) => {
    const { server, model } = await setup('openai');
    t.after(() => server.close());
    server.push(reply('lost', { streamError: {} }), reply('ok'));

    const result = await withModelRetries(
      (signal) => complete(model, { stream: true, signal }),
      retriesWithin(10_000),
    );

    assert.equal(result.text, 'ok');
    assert.equal(server.requests.length, 2);
  });

  test('an infinite deadline means no time limit', async () => {
    assert.equal(await withModelRetries(async () => 'done', { deadline: Number.POSITIVE_INFINITY }), 'done');
  });

  test('400 is final', async (t) => {
    const { server, model } = await setup('anthropic');
    t.after(() => server.close());
    server.push(httpError(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' }));

    const error = await failure(
      withModelRetries((signal) => complete(model, { stream: false, signal }), retriesWithin(10_000)),
    );

    assert.equal(error.code, 'model-unavailable');
    assert.match(error.message, /prompt is too long/);
    assert.equal(server.requests.length, 1);
  });
});

describe('prompt caching', () => {
  test('withCachedConversation marks the last message as a breakpoint for Anthropic', async (t) => {
    const { server, model } = await setup('anthropic');
    t.after(() => server.close());
    server.push(reply('hello'));
    const messages: ModelMessage[] = [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'second' },
    ];

    await complete(model, { stream: false, messages: withCachedConversation(messages) });

    const body = server.requests[0]?.body;
    assert.deepEqual(body.messages[2].content, [
      { type: 'text', text: 'second', cache_control: { type: 'ephemeral' } },
    ]);
    assert.equal(body.messages[0].content[0].cache_control, undefined);
    assert.equal(messages[2]?.providerOptions, undefined, 'the input is left untouched');
  });

  test('OpenAI-compatible requests carry no Anthropic cache fields', async (t) => {
    const { server, model } = await setup('openai-compatible');
    t.after(() => server.close());
    server.push(reply('hello'));

    await complete(model, {
      stream: false,
      messages: withCachedConversation([{ role: 'user', content: 'hi' }]),
    });

    assert.ok(!server.requests[0]?.rawBody.includes('cache_control'));
  });
});

describe('resolveModel configuration', () => {
  const notConfigured = (fn: () => unknown, pattern: RegExp) => {
    assert.throws(fn, (error: unknown) => {
      assert.ok(error instanceof AgentFailure);
      assert.equal(error.code, 'model-not-configured');
      assert.match(error.message, pattern);
      return true;
    });
  };

  test('an empty model id is model-not-configured', () => {
    notConfigured(() => resolveModel('', { env: {} }), /no model is configured/);
    notConfigured(() => resolveModel('   ', { env: {} }), /no model is configured/);
  });

  test('an unknown or missing provider is model-not-configured', () => {
    notConfigured(() => resolveModel('mistral/large', { env: {} }), /unknown model provider/);
    notConfigured(() => resolveModel('gpt-4o', { env: {} }), /unknown model provider/);
    notConfigured(() => resolveModel('openai/', { env: { OPENAI_API_KEY: OPENAI_KEY } }), /names no model/);
  });

  test('a missing key names the variable and no key', () => {
    const env = { OPENAI_API_KEY: OPENAI_KEY };
    notConfigured(() => resolveModel('anthropic/claude-sonnet-4-5', { env }), /ANTHROPIC_API_KEY/);
    notConfigured(
      () => resolveModel('openai/gpt-4.1', { env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } }),
      /OPENAI_API_KEY/,
    );
    notConfigured(() => resolveModel('openai/gpt-4.1', { env: { OPENAI_API_KEY: '  ' } }), /OPENAI_API_KEY/);
    try {
      resolveModel('anthropic/claude-sonnet-4-5', { env });
    } catch (error) {
      assert.ok(!(error as Error).message.includes(OPENAI_KEY));
    }
  });

  test('openai-compatible needs a base URL but no key', () => {
    notConfigured(
      () => resolveModel('openai-compatible/llama3', { env: {}, openaiCompatibleBaseUrl: null }),
      /DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL/,
    );
    notConfigured(
      () =>
        resolveModel('openai-compatible/llama3', {
          env: { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: 'not a url' },
        }),
      /not a valid URL/,
    );
    const model = resolveModel('openai-compatible/llama3', {
      env: { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434' },
    });
    assert.equal(model.modelId, 'llama3');
  });

  test('model names may contain slashes and colons', () => {
    const model = resolveModel('openai-compatible/meta-llama/Llama-3.1-8B-Instruct', {
      env: {},
      openaiCompatibleBaseUrl: 'http://127.0.0.1:8000/v1',
    });
    assert.equal(model.modelId, 'meta-llama/Llama-3.1-8B-Instruct');
  });

  test('project keys and base URL win over the environment; no key sends no Authorization', async (t) => {
    const server = await startOpenAIServer();
    t.after(() => server.close());
    server.push(reply('one'), reply('two'));
    const options = (extra: ResolveModelOptions): ResolveModelOptions => ({
      env: {
        DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
        ...extra.env,
      },
      openaiCompatibleBaseUrl: server.baseUrl,
      ...extra,
    });

    await complete(resolveModel('openai-compatible/llama3', options({})), { stream: false });
    await complete(
      resolveModel(
        'openai-compatible/llama3',
        options({
          env: {
            DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
            DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY: 'env',
          },
          apiKeys: { openaiCompatible: 'project-key' },
        }),
      ),
      { stream: false },
    );

    assert.equal(server.requests[0]?.headers.authorization, undefined);
    assert.equal(server.requests[1]?.headers.authorization, 'Bearer project-key');
  });
});

describe('classifyModelError', () => {
  test('parses retry-after-ms, retry-after seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(requestedWaitMs({ 'retry-after-ms': '250.5' }, now), 251);
    assert.equal(requestedWaitMs({ 'Retry-After': '2' }, now), 2000);
    assert.equal(requestedWaitMs({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }, now), 3000);
    assert.equal(requestedWaitMs({ 'retry-after': 'soon' }, now), undefined);
    assert.equal(requestedWaitMs(undefined, now), undefined);
  });

  test('passes AgentFailure codes through and treats aborts as cancelled', () => {
    assert.equal(
      classifyModelError(new AgentFailure('model-not-configured', 'x')).code,
      'model-not-configured',
    );
    assert.equal(classifyModelError(new DOMException('aborted', 'AbortError')).code, 'cancelled');
  });

  test('network errors are retryable, unknown errors are not, and no message carries a key', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    assert.deepEqual(
      { ...classifyModelError(new TypeError('terminated', { cause: reset })), message: '' },
      { code: 'model-unavailable', retryable: true, message: '' },
    );
    const unknown = classifyModelError(new Error(`boom with Bearer ${OPENAI_KEY} and sk-proj-abc123def456`));
    assert.equal(unknown.retryable, false);
    assert.ok(
      !unknown.message.includes(OPENAI_KEY) && !unknown.message.includes('abc123def456'),
      unknown.message,
    );
  });
});

describe('the doubles reject what the real APIs reject', { concurrency: true }, () => {
  const post = (url: string, headers: Record<string, string>, body: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  const errorOf = async (response: Response) =>
    ((await response.json()) as { error: { type: string; message: string; param?: string | null } }).error;

  test('Anthropic: max_tokens, anthropic-version and unanswered tool_use', async (t) => {
    const server = await startAnthropicServer({ apiKey: ANTHROPIC_KEY });
    t.after(() => server.close());
    const url = `${server.baseUrl}/messages`;
    const headers = { 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01' };
    const messages = [{ role: 'user', content: 'hi' }];

    const noMax = await post(url, headers, { model: 'claude', messages });
    assert.equal(noMax.status, 400);
    assert.deepEqual(await errorOf(noMax), {
      type: 'invalid_request_error',
      message: 'max_tokens: Field required',
    });

    const noVersion = await post(
      url,
      { 'x-api-key': ANTHROPIC_KEY },
      { model: 'claude', max_tokens: 10, messages },
    );
    assert.equal(noVersion.status, 400);

    const dangling = await post(url, headers, {
      model: 'claude',
      max_tokens: 10,
      messages: [
        ...messages,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'x', input: {} }] },
      ],
    });
    assert.equal(dangling.status, 400);
    assert.match((await errorOf(dangling)).message, /toolu_1/);
    assert.equal(server.requests.filter((r) => r.step !== null).length, 0, 'rejections play no step');
  });

  test('OpenAI: messages required, tool messages must answer a tool call, key checked', async (t) => {
    const server = await startOpenAIServer({ apiKey: OPENAI_KEY });
    t.after(() => server.close());
    const url = `${server.baseUrl}/chat/completions`;
    const headers = { authorization: `Bearer ${OPENAI_KEY}` };

    const noMessages = await post(url, headers, { model: 'gpt' });
    assert.equal(noMessages.status, 400);
    assert.equal((await errorOf(noMessages)).param, 'messages');

    const orphan = await post(url, headers, {
      model: 'gpt',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'tool', tool_call_id: 'call_1', content: '5' },
      ],
    });
    assert.equal(orphan.status, 400);

    const noKey = await post(url, {}, { model: 'gpt', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(noKey.status, 401);
  });
});
