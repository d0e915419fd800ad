/**
 * A local Anthropic Messages server (`POST /v1/messages`) that plays a script. It speaks the real
 * wire format — a JSON message, or with `stream: true` the server-sent events `message_start`,
 * `content_block_start`, `ping`, `content_block_delta` (`text_delta`, `input_json_delta`),
 * `content_block_stop`, `message_delta` (stop reason and usage) and `message_stop` — and rejects
 * what the real API rejects (missing `x-api-key`, `anthropic-version`, `max_tokens`, unanswered
 * `tool_use` blocks, more than four `cache_control` breakpoints…) with the real error envelope.
 *
 *   const server = await startAnthropicServer({
 *     apiKey: 'sk-ant-test',
 *     script: [toolCall('list_files', {}), reply('Done.')],
 *   });
 *   // resolveModel('anthropic/claude-test', { apiKeys: { anthropic: 'sk-ant-test' }, baseUrls: { anthropic: server.baseUrl } })
 *   server.requests[0].body.system[0].cache_control // { type: 'ephemeral' }
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

export interface AnthropicServerOptions {
  script?: ScriptEntry[];
  /** The key requests must carry in `x-api-key`; omit to accept any (but one is still required). */
  apiKey?: string;
}

const MAX_CACHE_BREAKPOINTS = 4;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

const errorEnvelope = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
  request_id: `req_${randomId(24)}`,
});

const invalid = (message: string): Rejection => ({
  status: 400,
  body: errorEnvelope('invalid_request_error', message),
});

const defaultType = (status: number): string => {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
};

const defaultMessage = (status: number): string => {
  switch (status) {
    case 401:
      return 'invalid x-api-key';
    case 403:
      return 'Your API key does not have permission to use the specified resource.';
    case 404:
      return 'model: not found';
    case 429:
      return 'This request would exceed the rate limit for your organization. Please try again later.';
    case 529:
      return 'Overloaded';
    default:
      return status >= 500 ? 'Internal server error' : 'Invalid request';
  }
};

function authenticate(apiKey: string | undefined, request: RecordedRequest): Rejection | null {
  const given = request.headers['x-api-key'];
  if (given === undefined && request.headers.authorization === undefined) {
    return { status: 401, body: errorEnvelope('authentication_error', 'x-api-key header is required') };
  }
  if (apiKey !== undefined && given !== apiKey) {
    return { status: 401, body: errorEnvelope('authentication_error', 'invalid x-api-key') };
  }
  if (request.headers['anthropic-version'] === undefined) {
    return invalid('anthropic-version: header is required');
  }
  return null;
}

const blocksOf = (content: unknown): unknown[] => (Array.isArray(content) ? content : []);

/** The checks the real API makes that a client library could plausibly get wrong. */
export function validateMessagesRequest(body: unknown): Rejection | null {
  if (!isObject(body)) return invalid('Request body must be a JSON object');
  if (typeof body.model !== 'string' || body.model === '') return invalid('model: Field required');
  if (body.max_tokens === undefined) return invalid('max_tokens: Field required');
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    return invalid('max_tokens: Input should be a valid integer greater than or equal to 1');
  }
  if (body.messages === undefined) return invalid('messages: Field required');
  if (!Array.isArray(body.messages)) return invalid('messages: Input should be a valid list');
  if (body.messages.length === 0) return invalid('messages: at least one message is required');

  let breakpoints = 0;
  const countCache = (block: unknown) => {
    if (isObject(block) && block.cache_control !== undefined && block.cache_control !== null) breakpoints++;
  };

  if (body.system !== undefined) {
    if (Array.isArray(body.system)) {
      for (const [i, block] of body.system.entries()) {
        if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') {
          return invalid(`system.${i}: Input should be a valid dictionary or object to extract fields from`);
        }
        countCache(block);
      }
    } else if (typeof body.system !== 'string') {
      return invalid('system: Input should be a valid string');
    }
  }

  let previousToolUses = new Set<string>();
  for (const [i, message] of (body.messages as unknown[]).entries()) {
    if (!isObject(message)) return invalid(`messages.${i}: Input should be a valid dictionary`);
    if (message.role !== 'user' && message.role !== 'assistant') {
      return invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) {
      return invalid(`messages.${i}.content: Input should be a valid string or list`);
    }
    const blocks = blocksOf(message.content);
    for (const block of blocks) countCache(block);

    if (previousToolUses.size > 0) {
      const answered = new Set(
        blocks
          .filter((b): b is Record<string, unknown> => isObject(b) && b.type === 'tool_result')
          .map((b) => String(b.tool_use_id)),
      );
      const missing = [...previousToolUses].filter((id) => !answered.has(id));
      if (message.role !== 'user' || missing.length > 0) {
        return invalid(
          `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
    }
    for (const [j, block] of blocks.entries()) {
      if (!isObject(block) || typeof block.type !== 'string') {
        return invalid(`messages.${i}.content.${j}: Input should be a valid dictionary`);
      }
      if (block.type === 'tool_result' && !previousToolUses.has(String(block.tool_use_id))) {
        return invalid(
          `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
      if (block.type === 'tool_use') {
        if (message.role !== 'assistant') {
          return invalid(`messages.${i}.content.${j}: tool_use blocks may only appear in assistant messages`);
        }
        if (typeof block.id !== 'string' || typeof block.name !== 'string' || !isObject(block.input)) {
          return invalid(`messages.${i}.content.${j}.tool_use.input: Input should be a valid dictionary`);
        }
      }
    }
    previousToolUses = new Set(
      message.role === 'assistant'
        ? blocks
            .filter((b): b is Record<string, unknown> => isObject(b) && b.type === 'tool_use')
            .map((b) => String(b.id))
        : [],
    );
  }
  if (previousToolUses.size > 0) {
    return invalid(
      `messages.${body.messages.length - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${[...previousToolUses].join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
    );
  }

  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return invalid('tools: Input should be a valid list');
    for (const [i, tool] of body.tools.entries()) {
      if (!isObject(tool) || typeof tool.name !== 'string')
        return invalid(`tools.${i}.custom.name: Field required`);
      if (!TOOL_NAME.test(tool.name)) {
        return invalid(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
      }
      if (tool.type === undefined || tool.type === 'custom') {
        if (!isObject(tool.input_schema)) return invalid(`tools.${i}.custom.input_schema: Field required`);
        if (tool.input_schema.type !== 'object') {
          return invalid(`tools.${i}.custom.input_schema.type: Input should be 'object'`);
        }
      }
      countCache(tool);
    }
  }
  if (breakpoints > MAX_CACHE_BREAKPOINTS) {
    return invalid(
      `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.`,
    );
  }
  return null;
}

type WireBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown; json: string };

function respond(request: RecordedRequest, step: ReplyStep, response: ServerResponse): Promise<void> {
  const body: Record<string, unknown> = request.body;
  const id = `msg_${randomId(24)}`;
  const model = String(body.model);
  const blocks: WireBlock[] = [];
  if (step.text) blocks.push({ type: 'text', text: step.text });
  for (const call of step.toolCalls ?? []) {
    const input = call.input ?? {};
    blocks.push({
      type: 'tool_use',
      id: call.id ?? `toolu_01${randomId(22)}`,
      name: call.name,
      input,
      json: JSON.stringify(input),
    });
  }
  const stopReason =
    step.finishReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const usage = {
    input_tokens: step.usage?.inputTokens ?? roughTokens(request.rawBody),
    cache_creation_input_tokens: step.usage?.cacheWriteTokens ?? 0,
    cache_read_input_tokens: step.usage?.cacheReadTokens ?? 0,
    output_tokens:
      step.usage?.outputTokens ??
      roughTokens(blocks.map((b) => (b.type === 'text' ? b.text : b.name + b.json)).join('')),
    service_tier: 'standard',
  };
  const content = blocks.map((b) =>
    b.type === 'text'
      ? { type: 'text', text: b.text }
      : { type: 'tool_use', id: b.id, name: b.name, input: b.input },
  );
  const requestId = `req_${randomId(24)}`;

  if (body.stream !== true) {
    const json = JSON.stringify({
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    });
    response.writeHead(200, {
      'request-id': requestId,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(json),
    });
    response.end(json);
    return Promise.resolve();
  }

  response.writeHead(200, {
    'request-id': requestId,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const send = (type: string, data: Record<string, unknown>) =>
    writeEvent(response, JSON.stringify({ type, ...data }), type);
  send('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  if (step.streamError) {
    const type = step.streamError.type ?? 'overloaded_error';
    send('error', { error: { type, message: step.streamError.message ?? 'Overloaded' } });
    response.end();
    return Promise.resolve();
  }
  for (const [index, block] of blocks.entries()) {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (index === 0) send('ping', {});
      for (const piece of pieces(block.text)) {
        send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      }
    } else {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      if (index === 0) send('ping', {});
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const piece of pieces(block.json)) {
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
      }
    }
    send('content_block_stop', { index });
  }
  send('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', {});
  response.end();
  return Promise.resolve();
}

/** Starts the double on 127.0.0.1 with a random port. */
export function startAnthropicServer(options: AnthropicServerOptions = {}): Promise<ScriptedServer> {
  return startScriptedServer(
    {
      path: '/v1/messages',
      authenticate: (request) => authenticate(options.apiKey, request),
      validate: (request) => validateMessagesRequest(request.body),
      errorBody: (error: ErrorStep['error']) =>
        errorEnvelope(error.type ?? defaultType(error.status), error.message ?? defaultMessage(error.status)),
      respond,
      notFound: () => ({ status: 404, body: errorEnvelope('not_found_error', 'Not Found') }),
      headers: () => ({ 'request-id': `req_${randomId(24)}` }),
    },
    options.script,
  );
}
