/**
 * Server-Sent Events connections that cannot hurt the process that serves them.
 *
 * A client that stops reading must not make the server buffer for it: a producer that sends
 * while the socket is full waits for it to drain (`drained()`), a client that leaves its backlog
 * over the buffer limit, or does not drain within the patience window, is disconnected. The
 * number of open streams is bounded per owner (an API key, a dashboard session) and per
 * process; past either bound a new stream is refused with 429 before anything is written.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamLimits } from '../config.ts';
import { DocwrightError } from '../errors.ts';
import { COMMON_HEADERS } from './response-headers.ts';

/** One Server-Sent Events message. */
export interface SseMessage {
  id?: string | number;
  event?: string;
  /** May hold newlines: each line becomes its own `data:` field. */
  data: string;
}

export interface EventStream {
  /** Aborts when the client leaves, is disconnected for reading too slowly, or `end()` is called. */
  readonly signal: AbortSignal;
  /**
   * Queues one message. Returns false when the producer should `await drained()` before the
   * next one (the socket is full) or stop (the stream is closed).
   */
  send(message: SseMessage): boolean;
  /** Resolves once the socket accepts more; a client that never reads is disconnected meanwhile. */
  drained(): Promise<void>;
  /** Ends the response; idempotent. */
  end(): void;
}

/**
 * The event streams one server holds open, with the bounds they keep: the server's decoration
 * `eventStreams` (server.ts), so that each server counts its own.
 */
export class OpenStreams {
  /** How many are open now. */
  total = 0;
  readonly byOwner = new Map<string, number>();
  readonly limits: StreamLimits;
  constructor(limits: StreamLimits) {
    this.limits = limits;
  }
}

/** Renders one SSE message as the wire text. */
export function formatSse(message: SseMessage): string {
  let text = '';
  if (message.id !== undefined) text += `id: ${message.id}\n`;
  if (message.event !== undefined) text += `event: ${message.event}\n`;
  // JSON (what the streams send) has no raw line breaks: one data field, no copy per line.
  if (!/[\r\n]/.test(message.data)) return `${text}data: ${message.data}\n\n`;
  for (const line of message.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return `${text}\n`;
}

/**
 * The 429 `too-many-streams` error an event stream for `owner` would be refused with now, or
 * undefined. For handlers that must know before they do work a refused stream would waste.
 */
export function eventStreamRefusal(request: FastifyRequest, owner: string): DocwrightError | undefined {
  const open = request.server.eventStreams;
  const { limits } = open;
  if ((open.byOwner.get(owner) ?? 0) >= limits.perOwner) {
    return new DocwrightError(
      'too-many-streams',
      `this API key already holds ${limits.perOwner} open event streams; close one (or poll the JSON list) before opening another`,
      { retryAfter: 5 },
    );
  }
  if (open.total >= limits.perProcess) {
    return new DocwrightError(
      'too-many-streams',
      'the server is serving as many event streams as it allows; retry shortly or poll the JSON list',
      { retryAfter: 5 },
    );
  }
  return undefined;
}

/**
 * Takes over the reply and opens an event stream, or throws 429 `too-many-streams` when the
 * owner or the process already holds as many as allowed.
 */
export function openEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  options: { owner: string; headers?: Record<string, string>; retryMs?: number },
): EventStream {
  const refusal = eventStreamRefusal(request, options.owner);
  if (refusal) throw refusal;
  const open = request.server.eventStreams;
  const { limits } = open;
  const owned = open.byOwner.get(options.owner) ?? 0;
  const registry = open;
  registry.total++;
  registry.byOwner.set(options.owner, owned + 1);

  reply.hijack();
  const raw = reply.raw;
  const controller = new AbortController();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearInterval(keepAlive);
    registry.total--;
    const left = (registry.byOwner.get(options.owner) ?? 1) - 1;
    if (left === 0) registry.byOwner.delete(options.owner);
    else registry.byOwner.set(options.owner, left);
    controller.abort();
  };
  /** Drops a client that does not read: its queued bytes are freed with the socket. */
  const disconnect = (why: string) => {
    if (controller.signal.aborted) return;
    request.log.info({ reason: why }, 'event stream client disconnected');
    raw.destroy();
    release();
  };
  raw.on('close', release);
  raw.on('error', release);

  // Headers set on the reply are not sent once it is hijacked: the common ones are written here.
  raw.writeHead(200, {
    ...COMMON_HEADERS,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...options.headers,
  });
  raw.write(`retry: ${options.retryMs ?? 2_000}\n\n`);
  const write = (text: string): boolean => {
    if (controller.signal.aborted) return false;
    const more = raw.write(text);
    if (raw.writableLength > limits.maxBufferBytes) {
      disconnect('send buffer full');
      return false;
    }
    return more;
  };
  // Keep-alives are skipped while the socket is full: they would only add to the backlog.
  const keepAlive = setInterval(() => {
    if (!raw.writableNeedDrain) write(': keep-alive\n\n');
  }, limits.keepAliveMs);
  keepAlive.unref();

  return {
    signal: controller.signal,
    send: (message) => write(formatSse(message)),
    drained() {
      if (controller.signal.aborted || !raw.writableNeedDrain) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          raw.off('drain', done);
          controller.signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(() => {
          disconnect('did not read for too long');
          done();
        }, limits.drainTimeoutMs);
        raw.once('drain', done);
        controller.signal.addEventListener('abort', done, { once: true });
      });
    },
    end() {
      if (controller.signal.aborted) return;
      raw.end();
      release();
    },
  };
}
