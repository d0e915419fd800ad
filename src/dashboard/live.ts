import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { type EventStream, openEventStream } from '../http/server-sent-events.ts';
import { isJobId } from '../ids.ts';
import type { JobStatus } from '../jobs/agent-job.ts';
import type { JobEvent } from '../jobs/events.ts';
import { hashSessionToken } from '../operators/sessions.ts';
import { renderDiff } from './diff-view.ts';
import { jobAnswer } from './job-answer.ts';
import { jobDetails, jobInstructions } from './job-page.ts';
import { statusBadge } from './layout.ts';
import { projectOf } from './projects.ts';
import { renderEvents } from './transcript.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<
  App,
  | 'config'
  | 'contextRepositories'
  | 'jobHistory'
  | 'jobs'
  | 'now'
  | 'projects'
  | 'sessions'
  | 'signals'
  | 'webhooks'
>;

/**
 * Live updates of the dashboard over Server-Sent Events (src/http/server-sent-events.ts: bounded
 * buffers, slow readers dropped, streams per session limited). htmx's SSE extension swaps each
 * message's HTML into the element whose `sse-swap` names the message's event.
 */

/** Event types after which the job's details, instructions and diff may read differently. */
const changesDetails = (event: JobEvent) =>
  event.type.startsWith('job.') ||
  event.type === 'run.started' ||
  event.type === 'agent.usage' ||
  event.type === 'git.pushed' ||
  event.type === 'pull_request.ready';

/** At most this many job ids in one jobs-list stream (a page shows 25). */
const MAX_LIST_IDS = 100;
/** How often the jobs-list stream looks again when no wake-up signal arrives. */
const LIST_POLL_MS = 2_000;

const streamOwner = (request: FastifyRequest) => `session:${hashSessionToken(request.signedIn!.token)}`;

/** Sends a message, waiting while the client's socket is full (a client that never reads is dropped). */
async function send(stream: EventStream, event: string, data: string, id?: number): Promise<void> {
  if (!stream.send({ event, data, id })) await stream.drained();
}

function lastEventId(request: FastifyRequest, after: string | undefined): number | undefined {
  const header = request.headers['last-event-id'];
  const value = typeof header === 'string' ? header : after;
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

export function registerLiveRoutes(server: FastifyInstance, app: AppUses): void {
  /** The job page: transcript as it is written; status, details, instructions and diff as they change. */
  server.get<{ Params: { projectId: string; jobId: string }; Querystring: { after?: string } }>(
    '/projects/:projectId/jobs/:jobId/live',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const job = await app.jobs.get(project.id, request.params.jobId);
      const stream = openEventStream(request, reply, { owner: streamOwner(request) });
      const sendDetails = async () => {
        const [current, runs, diff] = await Promise.all([
          app.jobs.get(project.id, job.id),
          app.jobHistory.runs(job.id),
          app.jobHistory.latestDiff(job.id),
        ]);
        const now = app.now();
        await send(stream, 'details', jobDetails(current, now).value);
        await send(stream, 'instructions', jobInstructions(runs, now).value);
        if (current.mode === 'ask') await send(stream, 'answer', jobAnswer(current, project).value);
        await send(
          stream,
          'diff',
          renderDiff(diff, { rawHref: `/projects/${project.id}/jobs/${job.id}/diff` }).value,
        );
      };
      try {
        const feed = app.jobHistory.follow(job.id, {
          after: lastEventId(request, request.query.after),
          signal: stream.signal,
        });
        for await (const events of feed) {
          await send(stream, 'transcript', renderEvents(events).value, events.at(-1)!.id);
          if (events.some(changesDetails)) await sendDetails();
          if (stream.signal.aborted) return;
        }
        if (stream.signal.aborted) return;
        // The job has ended: the last word on everything (a notice about the run goes), then the
        // client stops listening.
        await sendDetails();
        await send(stream, 'ended', 'ended');
        await send(stream, 'end', 'end');
      } catch (error) {
        // The browser reconnects with Last-Event-ID and misses nothing.
        request.log.warn({ err: error }, 'dashboard job stream failed; closing it');
      } finally {
        stream.end();
      }
    },
  );

  /** The jobs list: the status of each listed job that was active, until none is. */
  server.get<{ Params: { projectId: string }; Querystring: { ids?: string } }>(
    '/projects/:projectId/jobs/live',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const ids = [...new Set((request.query.ids ?? '').split(','))].filter(isJobId);
      if (ids.length === 0 || ids.length > MAX_LIST_IDS) {
        throw new DocwrightError('invalid-request', `ids must name 1 to ${MAX_LIST_IDS} jobs`);
      }
      const stream = openEventStream(request, reply, { owner: streamOwner(request) });
      const shown = new Map<string, JobStatus>(ids.map((id) => [id, 'active']));
      let wake: (() => void) | undefined;
      let nudged = false;
      const unsubscribe = app.signals.subscribe((signal) => {
        if (signal.kind !== 'job-event' || !shown.has(signal.jobId)) return;
        nudged = true;
        wake?.();
      });
      const onAbort = () => wake?.();
      stream.signal.addEventListener('abort', onAbort);
      try {
        while (!stream.signal.aborted) {
          nudged = false;
          const rows = await app.jobHistory.statuses(project.id, ids);
          for (const row of rows) {
            if (shown.get(row.id) === row.status) continue;
            shown.set(row.id, row.status);
            await send(stream, `status-${row.id}`, statusBadge(row.status).value);
          }
          if (rows.every((row) => row.status !== 'active')) {
            await send(stream, 'end', 'end');
            return;
          }
          if (nudged) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, LIST_POLL_MS);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      } catch (error) {
        request.log.warn({ err: error }, 'dashboard jobs stream failed; closing it');
      } finally {
        unsubscribe();
        stream.signal.removeEventListener('abort', onAbort);
        stream.end();
      }
    },
  );
}
