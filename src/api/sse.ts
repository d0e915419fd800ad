import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { listEvents } from '../jobs/events.ts';

const BATCH = 500;
const POLL_MS = 1_000;
const KEEP_ALIVE_MS = 15_000;

/** Whether the client asked for Server-Sent Events rather than a JSON list. */
export const wantsEventStream = (request: FastifyRequest): boolean =>
  (request.headers.accept ?? '').includes('text/event-stream');

/**
 * Streams a job's events as Server-Sent Events: everything after
 * `Last-Event-ID` (or `?after=`), then new events as they are written. Each
 * event's SSE id is its event id, so a reconnecting client resumes exactly
 * where it stopped. Signals wake the stream at once; a poll covers missed ones.
 */
export async function streamJobEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  app: App,
  job: { jobId: string; after: number | undefined },
): Promise<void> {
  const header = request.headers['last-event-id'];
  if (header !== undefined && (typeof header !== 'string' || !/^\d{1,15}$/.test(header))) {
    throw new DocwrightError('invalid-request', 'Last-Event-ID must be an event id', {
      fields: [{ field: 'header.Last-Event-ID', message: 'must be an event id (a whole number)' }],
    });
  }
  let lastId = header !== undefined ? Number(header) : (job.after ?? 0);

  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.write('retry: 2000\n\n');

  let closed = false;
  let wake: (() => void) | undefined;
  const nudge = () => wake?.();
  const unsubscribe = app.signals.subscribe((signal) => {
    if (signal.kind === 'job-event' && signal.jobId === job.jobId) nudge();
  });
  request.raw.on('close', () => {
    closed = true;
    nudge();
  });
  const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), KEEP_ALIVE_MS);

  try {
    while (!closed) {
      let events: Awaited<ReturnType<typeof listEvents>> = [];
      try {
        events = await listEvents(app.store.db, job.jobId, { after: lastId, limit: BATCH });
      } catch (error) {
        request.log.warn({ err: error }, 'event stream read failed; retrying');
      }
      for (const event of events) {
        raw.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        lastId = event.id;
      }
      if (events.length === BATCH) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    clearInterval(keepAlive);
    unsubscribe();
    raw.end();
  }
}
