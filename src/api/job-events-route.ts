import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { openEventStream } from '../http/server-sent-events.ts';
import { jobEventJson } from '../jobs/events.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'jobHistory'>;

/** Whether the client asked for Server-Sent Events rather than a JSON list. */
export const wantsEventStream = (request: FastifyRequest): boolean =>
  (request.headers.accept ?? '').includes('text/event-stream');

/**
 * Streams a job's events as Server-Sent Events: everything after `Last-Event-ID` (or
 * `?after=`), then new events as they are written, each with its event id as the SSE id so
 * that a reconnecting client resumes exactly where it stopped. When the job has left `active`
 * and its last event is out, an `end` message (data: the job's status) closes the stream:
 * clients stop there instead of reconnecting. Events are read only as fast as the client
 * takes them.
 */
export async function streamJobEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  app: AppUses,
  job: { jobId: string; after: number | undefined; owner: string },
): Promise<void> {
  const header = request.headers['last-event-id'];
  if (header !== undefined && (typeof header !== 'string' || !/^\d{1,15}$/.test(header))) {
    throw new DocwrightError('invalid-request', 'Last-Event-ID must be an event id', {
      fields: [{ field: 'header.Last-Event-ID', message: 'must be an event id (a whole number)' }],
    });
  }
  const after = header !== undefined ? Number(header) : job.after;
  const stream = openEventStream(request, reply, { owner: job.owner });
  try {
    const feed = app.jobHistory.followRows(job.jobId, {
      after,
      signal: stream.signal,
    });
    for await (const events of feed) {
      for (const event of events) {
        if (!stream.send({ id: Number(event.id), event: event.type, data: jobEventJson(event) })) {
          await stream.drained();
        }
        if (stream.signal.aborted) return;
      }
    }
    if (stream.signal.aborted) return;
    const status = await app.jobHistory.status(job.jobId);
    stream.send({ event: 'end', data: JSON.stringify({ status }) });
  } catch (error) {
    // The client reconnects with Last-Event-ID and loses nothing.
    request.log.warn({ err: error }, 'event stream failed; closing it');
  } finally {
    stream.end();
  }
}
