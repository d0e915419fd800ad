/**
 * A local OpenAI Chat Completions server (`POST /v1/chat/completions`) that plays a script.
 * It speaks the real wire format — JSON, or `stream: true` server-sent chunks ending in
 * `data: [DONE]`, tool calls as `tool_calls[].function.arguments` strings, `usage` (in a final
 * chunk with no choices when `stream_options.include_usage` is set) — and rejects requests the
 * real API would reject, with the real API's error envelope. It serves `openai/…` and
 * `openai-compatible/…` models alike.
 *
 *   const server = await startOpenAIServer({
 *     apiKey: 'sk-test',
 *     script: [toolCall('read_file', { path: 'index.mdx' }), rateLimited(0), reply('Done.')],
 *   });
 *   // resolveModel('openai/gpt-test', { apiKeys: { openai: 'sk-test' }, baseUrls: { openai: server.baseUrl } })
 *   server.requests[1].body.messages // what the production code sent back (tool results…)
 */
import type { ServerResponse } from 'node:http';
import {
  type ErrorStep,
  isObject,
  pieces,
  type RecordedRequest,
  type Rejection,
  type ReplyStep,
  randomId,
  roughTokens,
  type ScriptEntry,
  type ScriptedServer,
  startScriptedServer,
  writeEvent,
} from './script.ts';

export * from './script.ts';

export interface OpenAIServerOptions {
  script?: ScriptEntry[];
  /** Answers every request once the script is played out (see startScriptedServer). */
  fallback?: ScriptEntry;
  /** The key requests must carry as `Authorization: Bearer …`; omit to accept any or none (like Ollama). */
  apiKey?: string;
}

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const errorEnvelope = (
  message: string,
  type: string,
  param: string | null = null,
  code: string | null = null,
) => ({
  error: { message, type, param, code },
});

const invalid = (message: string, param: string | null = null, code: string | null = null): Rejection => ({
  status: 400,
  body: errorEnvelope(message, 'invalid_request_error', param, code),
});

const defaultType = (status: number): string => {
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
};

const defaultMessage = (status: number): string => {
  if (status === 429) return 'Rate limit reached for requests. Please try again in 1s.';
  if (status === 401) return 'Incorrect API key provided.';
  if (status === 403) return 'You are not allowed to sample from this model';
  if (status === 404) return 'The model does not exist or you do not have access to it.';
  if (status >= 500) return 'The server had an error while processing your request. Sorry about that!';
  return 'Invalid request.';
};

const maskKey = (key: string) =>
  `${key.slice(0, 3)}${'*'.repeat(Math.max(4, key.length - 7))}${key.slice(-4)}`;

function authenticate(apiKey: string | undefined, request: RecordedRequest): Rejection | null {
  if (apiKey === undefined) return null;
  const header = request.headers.authorization;
  if (!header?.startsWith('Bearer ') || header.length === 'Bearer '.length) {
    return {
      status: 401,
      body: errorEnvelope(
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        'invalid_request_error',
      ),
    };
  }
  const given = header.slice('Bearer '.length);
  if (given !== apiKey) {
    return {
      status: 401,
      body: errorEnvelope(
        `Incorrect API key provided: ${maskKey(given)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        null,
        'invalid_api_key',
      ),
    };
  }
  return null;
}

/** The checks the real API makes that a client library could plausibly get wrong. */
export function validateChatRequest(body: unknown): Rejection | null {
  if (!isObject(body)) {
    return invalid(
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
    );
  }
  if (typeof body.model !== 'string' || body.model === '')
    return invalid('you must provide a model parameter');
  if (body.messages === undefined) {
    return invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  }
  if (!Array.isArray(body.messages)) {
    return invalid("Invalid type for 'messages': expected an array.", 'messages', 'invalid_type');
  }
  if (body.messages.length === 0) {
    return invalid(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    );
  }
  if (body.stream_options !== undefined && body.stream !== true) {
    return invalid(
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      'stream_options',
    );
  }
  const pending = new Set<string>();
  let pendingFrom = -1;
  for (const [i, message] of (body.messages as unknown[]).entries()) {
    if (!isObject(message))
      return invalid(`Invalid type for 'messages[${i}]': expected an object.`, `messages[${i}]`);
    const role = message.role;
    if (typeof role !== 'string' || !ROLES.includes(role)) {
      return invalid(
        `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${i}].role`,
        'invalid_value',
      );
    }
    if (pending.size > 0 && role !== 'tool') {
      return invalid(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
        `messages.[${pendingFrom}].role`,
      );
    }
    if (role === 'tool') {
      if (typeof message.tool_call_id !== 'string') {
        return invalid(
          `Missing required parameter: 'messages[${i}].tool_call_id'.`,
          `messages[${i}].tool_call_id`,
          'missing_required_parameter',
        );
      }
      if (!pending.delete(message.tool_call_id)) {
        return invalid(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        );
      }
      if (message.content === undefined) {
        return invalid(
          `Missing required parameter: 'messages[${i}].content'.`,
          `messages[${i}].content`,
          'missing_required_parameter',
        );
      }
    } else if (role === 'assistant') {
      if (message.tool_calls !== undefined && message.tool_calls !== null) {
        if (!Array.isArray(message.tool_calls)) {
          return invalid(
            `Invalid type for 'messages[${i}].tool_calls': expected an array.`,
            `messages[${i}].tool_calls`,
          );
        }
        for (const [j, call] of message.tool_calls.entries()) {
          const fn = isObject(call) ? call.function : undefined;
          if (!isObject(call) || typeof call.id !== 'string' || call.type !== 'function' || !isObject(fn)) {
            return invalid(`Invalid 'messages[${i}].tool_calls[${j}]'.`, `messages[${i}].tool_calls[${j}]`);
          }
          if (typeof fn.name !== 'string' || typeof fn.arguments !== 'string') {
            return invalid(
              `Missing required parameter: 'messages[${i}].tool_calls[${j}].function.arguments'.`,
              `messages[${i}].tool_calls[${j}].function.arguments`,
              'missing_required_parameter',
            );
          }
          pending.add(call.id);
        }
        pendingFrom = i;
      } else if (message.content === undefined || message.content === null) {
        return invalid(
          `Invalid value for 'messages[${i}].content': expected a string, got null.`,
          `messages[${i}].content`,
        );
      }
    } else if (message.content === undefined || message.content === null) {
      return invalid(
        `Missing required parameter: 'messages[${i}].content'.`,
        `messages[${i}].content`,
        'missing_required_parameter',
      );
    }
  }
  if (pending.size > 0) {
    return invalid(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
      `messages.[${pendingFrom}].role`,
    );
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return invalid("Invalid type for 'tools': expected an array.", 'tools');
    for (const [i, tool] of body.tools.entries()) {
      if (!isObject(tool) || tool.type !== 'function') {
        return invalid(
          `Missing required parameter: 'tools[${i}].type'.`,
          `tools[${i}].type`,
          'missing_required_parameter',
        );
      }
      const fn = tool.function;
      if (!isObject(fn) || typeof fn.name !== 'string') {
        return invalid(
          `Missing required parameter: 'tools[${i}].function.name'.`,
          `tools[${i}].function.name`,
          'missing_required_parameter',
        );
      }
      if (!TOOL_NAME.test(fn.name)) {
        return invalid(
          `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
          `tools[${i}].function.name`,
          'invalid_value',
        );
      }
      if (fn.parameters !== undefined && (!isObject(fn.parameters) || fn.parameters.type !== 'object')) {
        return invalid(
          `Invalid schema for function '${fn.name}': schema must be a JSON Schema of 'type: "object"', got 'type: "${String(isObject(fn.parameters) ? fn.parameters.type : undefined)}"'.`,
          `tools[${i}].function.parameters`,
          'invalid_function_parameters',
        );
      }
    }
  }
  return null;
}

interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

function respond(request: RecordedRequest, step: ReplyStep, response: ServerResponse): Promise<void> {
  const body: Record<string, unknown> = request.body;
  const id = `chatcmpl-${randomId(29)}`;
  const created = Math.floor(Date.now() / 1000);
  const model = String(body.model);
  const calls: WireToolCall[] = (step.toolCalls ?? []).map((call) => ({
    id: call.id ?? `call_${randomId(24)}`,
    name: call.name,
    arguments: JSON.stringify(call.input ?? {}),
  }));
  const text = step.text ?? null;
  const finishReason = step.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
  const promptTokens = step.usage?.inputTokens ?? roughTokens(request.rawBody);
  const completionTokens =
    step.usage?.outputTokens ?? roughTokens((text ?? '') + calls.map((c) => c.name + c.arguments).join(''));
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: step.usage?.cacheReadTokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };

  if (body.stream !== true) {
    const json = JSON.stringify({
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text,
            refusal: null,
            ...(calls.length > 0 && {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: c.arguments },
              })),
            }),
            annotations: [],
          },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      usage,
      service_tier: 'default',
      system_fingerprint: 'fp_docwright',
    });
    response.writeHead(200, {
      ...responseHeaders(),
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(json),
    });
    response.end(json);
    return Promise.resolve();
  }

  const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: 'fp_docwright',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage && { usage: null }),
    });
  response.writeHead(200, {
    ...responseHeaders(),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  writeEvent(response, chunk({ role: 'assistant', content: '', refusal: null }));
  if (step.streamError) {
    response.destroy();
    return Promise.resolve();
  }
  if (text) for (const piece of pieces(text)) writeEvent(response, chunk({ content: piece }));
  for (const [index, call] of calls.entries()) {
    writeEvent(
      response,
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (const piece of pieces(call.arguments)) {
      writeEvent(response, chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  writeEvent(response, chunk({}, finishReason));
  if (includeUsage) {
    writeEvent(
      response,
      JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        service_tier: 'default',
        system_fingerprint: 'fp_docwright',
        choices: [],
        usage,
      }),
    );
  }
  writeEvent(response, '[DONE]');
  response.end();
  return Promise.resolve();
}

const responseHeaders = () => ({
  'x-request-id': `req_${randomId(32)}`,
  'openai-processing-ms': '12',
  'openai-version': '2020-10-01',
});

/** Starts the double on 127.0.0.1 with a random port. */
export function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<ScriptedServer> {
  return startScriptedServer(
    {
      path: '/v1/chat/completions',
      authenticate: (request) => authenticate(options.apiKey, request),
      validate: (request) => validateChatRequest(request.body),
      errorBody: (error: ErrorStep['error']) =>
        errorEnvelope(
          error.message ?? defaultMessage(error.status),
          error.type ?? defaultType(error.status),
          null,
          error.status === 429 ? 'rate_limit_exceeded' : null,
        ),
      respond,
      notFound: (request) => ({
        status: 404,
        body: errorEnvelope(`Invalid URL (${request.method} ${request.path})`, 'invalid_request_error'),
      }),
      headers: responseHeaders,
    },
    options.script,
    options.fallback,
  );
}
