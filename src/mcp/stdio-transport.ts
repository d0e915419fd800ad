/**
 * The MCP stdio transport of `docwright mcp`: newline-delimited JSON-RPC messages on stdin and
 * stdout, as the SDK's `StdioServerTransport` speaks them, but answering what is not a message
 * instead of ignoring it or ending the session, and with bounded memory. The SDK's transport
 * sends nothing back for a line that is not JSON or not JSON-RPC (the client waits forever),
 * closes the session on a line over its 10 MiB buffer (the process then exits 0, silently), and
 * copies its whole buffer on every chunk while a long line arrives. Here:
 * - a line that is not JSON is answered -32700 (parse error);
 * - JSON that is not a JSON-RPC message, nested deeper than MAX_DEPTH, or longer than
 *   MAX_LINE_BYTES is answered -32600 (invalid request); a long line is answered as soon as it
 *   passes the limit, and the rest of it is dropped as it arrives, never held;
 * and the session goes on. An answer carries the message's `id` when it could be read, and no
 * `id` otherwise (MCP's error response makes it optional for that case; a JSON-RPC `null` would
 * be refused by MCP clients).
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * Longest line read. The largest message a client has reason to send is a tool call with a
 * 100,000-character prompt: at most 600 kB even if every character is JSON-escaped (`\uXXXX`).
 */
export const MAX_LINE_BYTES = 1024 * 1024;
/** Deepest nesting of objects and arrays read. No MCP message nears it; deeper ones are refused before anything recursive walks them. */
export const MAX_DEPTH = 64;

const NEWLINE = 0x0a;

/** How deep `json` (valid JSON) nests objects and arrays, counting no further than `limit + 1`. */
function nestingDepth(json: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length && deepest <= limit; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** The id of a message that was refused, when it has a usable one. */
function idOf(value: unknown): string | number | undefined {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' || Number.isInteger(id) ? (id as string | number) : undefined;
}

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #maxLineBytes: number;
  /** The line read so far, in pieces. */
  #pieces: Buffer[] = [];
  #bytes = 0;
  /** Dropping the rest of a line that was too long. */
  #dropping = false;
  #closed = false;

  constructor(
    options: {
      input?: Readable;
      output?: Writable;
      /** Longest line read (default MAX_LINE_BYTES). */
      maxLineBytes?: number;
    } = {},
  ) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  }

  /** Bytes held of the line being read: never more than the limit. */
  get heldBytes(): number {
    return this.#bytes;
  }

  async start(): Promise<void> {
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onError);
    this.#output.on('error', this.#onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#closed || this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onError);
    this.#output.off('error', this.#onError);
    this.#input.pause();
    this.#pieces = [];
    this.onclose?.();
  }

  readonly #onError = (error: Error) => this.onerror?.(error);

  readonly #onData = (chunk: Buffer | string) => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      this.#take(data.subarray(start, end));
      if (!this.#dropping) this.#line(Buffer.concat(this.#pieces, this.#bytes).toString('utf8'));
      this.#pieces = [];
      this.#bytes = 0;
      this.#dropping = false;
      start = end + 1;
    }
    this.#take(data.subarray(start));
  };

  /** Adds part of the current line, unless it makes the line too long: then it is answered and dropped. */
  #take(part: Buffer): void {
    if (this.#dropping || part.length === 0) return;
    if (this.#bytes + part.length > this.#maxLineBytes) {
      this.#dropping = true;
      this.#pieces = [];
      this.#bytes = 0;
      this.#refuse(ErrorCode.InvalidRequest, `message longer than ${this.#maxLineBytes} bytes`);
      return;
    }
    // A copy: a piece of the chunk would keep the whole chunk alive.
    this.#pieces.push(Buffer.from(part));
    this.#bytes += part.length;
  }

  #line(text: string): void {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.#refuse(ErrorCode.ParseError, 'parse error: the line is not JSON');
      return;
    }
    if (nestingDepth(text, MAX_DEPTH) > MAX_DEPTH) {
      this.#refuse(ErrorCode.InvalidRequest, `message nested deeper than ${MAX_DEPTH} levels`, idOf(value));
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (!message.success) {
      this.#refuse(
        ErrorCode.InvalidRequest,
        'invalid request: not a JSON-RPC 2.0 request, notification or response',
        idOf(value),
      );
      return;
    }
    this.onmessage?.(message.data);
  }

  #refuse(code: ErrorCode, message: string, id?: string | number): void {
    void this.send({ jsonrpc: '2.0', ...(id !== undefined && { id }), error: { code, message } });
  }
}
