/**
 * What the model-API test doubles share: the script a double plays, the record of what it
 * received, and a small `node:http` server that ties the two together. The wire formats
 * live in openai-server.ts and anthropic-server.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  name: string;
  input: unknown;
  /** Defaults to a provider-style id (`call_…` for OpenAI, `toolu_…` for Anthropic). */
  id?: string;
}

/** Token counts the double reports; omitted fields get plausible defaults. */
export interface ScriptedUsage {
  inputTokens?: number;
  outputTokens?: number;
  /** Prompt tokens served from the cache (`cached_tokens`, `cache_read_input_tokens`). */
  cacheReadTokens?: number;
  /** Prompt tokens written to the cache (Anthropic's `cache_creation_input_tokens`). */
  cacheWriteTokens?: number;
}

/** One assistant turn: text, tool calls, or both (text first). */
export interface ReplyStep {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: ScriptedUsage;
  /** Wire finish reason; defaults to the one the API would give (`tool_calls`/`tool_use` or `stop`/`end_turn`). */
  finishReason?: string;
  /** Wait this long before answering (to test timeouts and cancellation). */
  delayMs?: number;
  /** Answer only once this settles: holds the answer for as long as the test needs, whatever the machine's speed. */
  until?: Promise<unknown>;
  /**
   * Streaming only: fail after the stream has started. Anthropic sends an `error` event (e.g.
   * `overloaded_error`) as the real API does; the OpenAI double drops the connection.
   */
  streamError?: { type?: string; message?: string };
}

/** An HTTP error answer, shaped like the real API's error body. */
export interface ErrorStep {
  error: {
    status: number;
    headers?: Record<string, string>;
    /** Human message inside the API's error envelope. */
    message?: string;
    /** Error type inside the envelope (defaults follow the status, like the real API). */
    type?: string;
    /** Raw body instead of the API's JSON envelope (e.g. an HTML page from a proxy). */
    rawBody?: string;
  };
  delayMs?: number;
}

export type ScriptStep = ReplyStep | ErrorStep;

/** A step, or a function computing it from the request it answers (e.g. to echo a tool result). */
export type ScriptEntry = ScriptStep | ((request: RecordedRequest) => ScriptStep);

/** Everything a double received, so tests can assert what production code sent. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Parsed JSON body (`undefined` when the body was empty or not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields.
  body: any;
  rawBody: string;
  /** HTTP status the double answered with. */
  status: number;
  /** Index of the script step that answered, or null when validation or auth answered first. */
  step: number | null;
  /** `Date.now()` when the request arrived (to measure client back-off). */
  receivedAt: number;
  /**
   * `performance.now()` when the request's headers arrived and when the answer was fully
   * written (undefined until then): the model's time as the double sees it (bench/pipeline.ts).
   */
  served: { start: number; end?: number };
}

export const reply = (text: string, extra: Omit<ReplyStep, 'text'> = {}): ReplyStep => ({ text, ...extra });

/** A turn that calls one tool by name with a JSON input. */
export const toolCall = (
  name: string,
  input: unknown,
  extra: Omit<ReplyStep, 'toolCalls'> = {},
): ReplyStep => ({
  toolCalls: [{ name, input }],
  ...extra,
});

/** A turn that calls several tools at once (parallel tool calls). */
export const toolCalls = (...calls: ScriptedToolCall[]): ReplyStep => ({ toolCalls: calls });

export const httpError = (
  status: number,
  options: { headers?: Record<string, string>; message?: string; type?: string; rawBody?: string } = {},
): ErrorStep => ({ error: { status, ...options } });

/** 429 with `retry-after` in seconds, as both APIs send it. */
export const rateLimited = (retryAfterSeconds: number, headers: Record<string, string> = {}): ErrorStep =>
  httpError(429, { headers: { 'retry-after': String(retryAfterSeconds), ...headers } });

export const isErrorStep = (step: ScriptStep): step is ErrorStep => 'error' in step;

/** A rejection the double produces itself (bad request, bad key): status plus the API's error body. */
export interface Rejection {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `url` + `/v1`: what the provider takes as its base URL. */
  baseUrl: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Appends steps to the script. */
  push(...steps: ScriptEntry[]): void;
  /** Script steps not yet played. */
  remaining(): number;
  close(): Promise<void>;
}

export interface DoubleHandlers {
  /** The one path the API serves (`/v1/chat/completions`, `/v1/messages`). */
  path: string;
  /** Checks authentication; a rejection is answered without consuming a step. */
  authenticate(request: RecordedRequest): Rejection | null;
  /** Checks the body like the real API; a rejection is answered without consuming a step. */
  validate(request: RecordedRequest): Rejection | null;
  /** Error envelope for a scripted error step. */
  errorBody(step: ErrorStep['error']): unknown;
  /** Answers a reply step (JSON or SSE, as the request asked). */
  respond(request: RecordedRequest, step: ReplyStep, response: ServerResponse): Promise<void>;
  /** Body for an unknown path or a method other than POST. */
  notFound(request: RecordedRequest): Rejection;
  /** Extra headers on every answer (request ids…). */
  headers(): Record<string, string>;
}

/**
 * Starts a double that plays `script`, one step a request; once the script is played out,
 * `fallback` (when given) answers every further request, e.g. a model that picks its answer from
 * what the request carries, as several agents calling at once need.
 */
export async function startScriptedServer(
  handlers: DoubleHandlers,
  script: ScriptEntry[] = [],
  fallback?: ScriptEntry,
): Promise<ScriptedServer> {
  const queue = [...script];
  const requests: RecordedRequest[] = [];
  let played = 0;

  const sendJson = (
    response: ServerResponse,
    status: number,
    body: unknown,
    headers?: Record<string, string>,
  ) => {
    const text = JSON.stringify(body);
    response.writeHead(status, {
      ...handlers.headers(),
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    response.end(text);
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse) => {
    const receivedAt = Date.now();
    const served: RecordedRequest['served'] = { start: performance.now() };
    response.on('finish', () => {
      served.end = performance.now();
    });
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    const request: RecordedRequest = {
      method: incoming.method ?? 'GET',
      path: (incoming.url ?? '/').split('?')[0] ?? '/',
      headers,
      body,
      rawBody,
      status: 0,
      step: null,
      receivedAt,
      served,
    };
    requests.push(request);

    const reject = (rejection: Rejection) => {
      request.status = rejection.status;
      sendJson(response, rejection.status, rejection.body, rejection.headers);
    };

    if (request.method !== 'POST' || request.path !== handlers.path)
      return reject(handlers.notFound(request));
    const authFailure = handlers.authenticate(request);
    if (authFailure) return reject(authFailure);
    const invalid = handlers.validate(request);
    if (invalid) return reject(invalid);

    const entry = queue.shift() ?? fallback;
    if (entry === undefined) {
      return reject({
        status: 400,
        body: handlers.errorBody({
          status: 400,
          message: `test double: script exhausted, no step left for request #${requests.length}`,
        }),
      });
    }
    request.step = played++;
    const step = typeof entry === 'function' ? entry(request) : entry;
    if (step.delayMs) await new Promise((resolve) => setTimeout(resolve, step.delayMs));
    if (!isErrorStep(step) && step.until) await step.until;
    if (response.destroyed) return;
    if (isErrorStep(step)) {
      request.status = step.error.status;
      if (step.error.rawBody !== undefined) {
        response.writeHead(step.error.status, {
          ...handlers.headers(),
          'content-type': 'text/html',
          ...step.error.headers,
        });
        response.end(step.error.rawBody);
        return;
      }
      return sendJson(response, step.error.status, handlers.errorBody(step.error), step.error.headers);
    }
    request.status = 200;
    await handlers.respond(request, step, response);
  };

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      if (!response.headersSent) {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(`test double failed: ${String(error)}`);
      } else {
        response.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    push: (...steps) => {
      queue.push(...steps);
    },
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Writes one server-sent event; `event` is omitted for OpenAI-style `data:`-only streams. */
export function writeEvent(response: ServerResponse, data: string, event?: string): void {
  response.write(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
}

/** Splits a string into a few pieces, so clients must reassemble deltas. */
export function pieces(text: string, count = 3): string[] {
  if (text.length <= 1) return [text];
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** A base62 id suffix like the ones the real APIs mint. */
export function randomId(length = 24): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)];
  return out;
}

/** Rough token count for default usage numbers (about four characters a token). */
export const roughTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
