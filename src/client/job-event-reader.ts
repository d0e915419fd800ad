/**
 * A job's transcript as Server-Sent Events (`GET …/events` with `Accept: text/event-stream`),
 * as an async iterator. It ends when the server sends `end` (the job left `active` and its
 * last event was delivered); a dropped or silent connection is reopened with `Last-Event-ID` set to the last event delivered, and events the
 * server sends again are skipped, so the caller sees every event once, in order. Parsing is
 * eventsource-parser's (a spec-complete SSE parser with a buffer bound).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { sleep } from '../retry.ts';
import { DocwrightApiError, networkError } from './errors.ts';
import type { Transport } from './http.ts';
import type { FollowEventsOptions, JobEvent } from './types.ts';

const DEFAULT_RECONNECT_MS = 1_000;
const DEFAULT_MAX_RECONNECTS = 10;
const DEFAULT_IDLE_TIMEOUT_MS = 45_000;
/** Longest partial event the parser keeps (the server truncates large event data well below it). */
const MAX_BUFFER_CHARS = 8 * 1024 * 1024;

/** Statuses after which reopening the stream may succeed. */
const TRANSIENT = new Set([0, 429, 503]);

export async function* followEventStream(
  transport: Transport,
  path: string,
  apiKey: string,
  options: FollowEventsOptions = {},
): AsyncGenerator<JobEvent, void, undefined> {
  const { signal } = options;
  const maxReconnects = options.maxReconnects ?? DEFAULT_MAX_RECONNECTS;
  let lastId = options.after;
  let serverRetryMs: number | undefined;
  let failures = 0;
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    const connection = new AbortController();
    const onAbort = () => connection.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let idle: NodeJS.Timeout | undefined;
    let lastError: unknown;
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (lastId !== undefined) headers['last-event-id'] = String(lastId);
      const response = await transport.open({ method: 'GET', path, headers, signal: connection.signal });
      if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || !response.body) {
        await response.body?.cancel();
        throw new DocwrightApiError({
          status: response.status,
          code: 'invalid-response',
          title: 'Invalid response',
          detail: 'the server did not answer with an event stream',
          request: `GET ${path}`,
        });
      }
      failures = 0;
      const messages: EventSourceMessage[] = [];
      const parser = createParser({
        onEvent: (message) => messages.push(message),
        onRetry: (ms) => {
          serverRetryMs = ms;
        },
        maxBufferSize: MAX_BUFFER_CHARS,
      });
      const resetIdle = () => {
        clearTimeout(idle);
        idle = setTimeout(
          () => connection.abort(new Error('the event stream went silent')),
          options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
        );
      };
      resetIdle();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      // fetch errors its body on abort; a custom fetch's body might not: a pending read must end anyway.
      connection.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        resetIdle();
        parser.feed(value);
        while (messages.length > 0) {
          const message = messages.shift()!;
          if (message.event === 'end') return;
          const event = parseEvent(message, path);
          if (event === undefined || (lastId !== undefined && event.id <= lastId)) continue;
          lastId = event.id;
          yield event;
        }
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof DocwrightApiError && !TRANSIENT.has(error.status)) throw error;
      lastError =
        error instanceof DocwrightApiError ? error : networkError(error, `GET ${path}`, apiKey, false);
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', onAbort);
      connection.abort();
    }
    // The stream ended or broke: open it again after the server's hint, a bounded number of times.
    failures++;
    if (failures > maxReconnects) {
      throw (
        lastError ??
        new DocwrightApiError({
          status: 0,
          code: 'network-error',
          title: 'Network error',
          detail: `the event stream closed ${failures} times in a row`,
          request: `GET ${path}`,
        })
      );
    }
    await sleep(options.reconnectDelayMs ?? serverRetryMs ?? DEFAULT_RECONNECT_MS, signal);
  }
}

function parseEvent(message: EventSourceMessage, path: string): JobEvent | undefined {
  if (message.data === '') return undefined;
  try {
    const event = JSON.parse(message.data) as JobEvent;
    if (typeof event?.id === 'number' && typeof event.type === 'string') return event;
  } catch {
    // reported below
  }
  throw new DocwrightApiError({
    status: 200,
    code: 'invalid-response',
    title: 'Invalid response',
    detail: 'an event of the stream is not a job event',
    request: `GET ${path}`,
  });
}
