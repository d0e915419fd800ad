import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import { authorizeProject, bearerKey } from '../../http/auth.ts';
import { idempotencyOf } from '../../http/idempotency.ts';
import { setRateLimitHeaders } from '../../http/rate-limit-headers.ts';
import type { JobWork } from '../../jobs/work-result.ts';
import { hashKey } from '../../keys/key-format.ts';
import { streamJobEvents, wantsEventStream } from '../job-events-route.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'jobHistory' | 'jobPolls' | 'jobs' | 'keys' | 'now'>;

/** What Fastify answers a returned object with. */
const JSON_TYPE = 'application/json; charset=utf-8';

type ProjectParams = { Params: { projectId: string } };
type JobParams = { Params: { projectId: string; id: string } };

/** Where a job is read (the `Location` of a create). */
const jobPath = (projectId: string, jobId: string) => `/v2/agent/${projectId}/job/${jobId}`;

/**
 * The answer to work (docs/api/overview.mdx): 201 with `Location` for a create, 200 for a
 * follow-up or a retry, the rate-limit headers, and `Idempotent-Replayed` on a replay. A replay
 * goes through here too, from the work its key remembered, so it answers byte for byte the same.
 */
function sendWork(reply: FastifyReply, projectId: string, work: JobWork) {
  setRateLimitHeaders(reply, work.rateLimit);
  if (work.created) reply.header('location', jobPath(projectId, work.job.id));
  if (work.replayed) reply.header('idempotent-replayed', 'true');
  return reply.status(work.created ? 201 : 200).send(work.job);
}

/** The job API of docs/api/overview.mdx. Routes only translate HTTP; the job service decides. */
export function registerJobRoutes(server: FastifyInstance, app: AppUses): void {
  // Authentication runs before the body is read, so that an unauthenticated
  // client learns nothing (not even 413/415) and costs no parsing.
  const authorize = async (request: FastifyRequest) => {
    const { projectId } = request.params as { projectId: string };
    request.principal = await authorizeProject(request, projectId, {
      keys: app.keys,
      projectExists: app.jobs.projectExists,
    });
  };
  // Create and follow-up responses carry the rate-limit headers (docs/api/rate-limits.mdx), errors included.
  const work = { onRequest: authorize, config: { rateLimitHeaders: true } };

  server.post<ProjectParams>('/v2/agent/:projectId/job', work, async (request, reply) => {
    const { projectId } = request.params;
    return sendWork(reply, projectId, await app.jobs.create(projectId, request.body, idempotencyOf(request)));
  });

  server.post<JobParams>('/v2/agent/:projectId/job/:id/message', work, async (request, reply) => {
    const { projectId, id } = request.params;
    return sendWork(
      reply,
      projectId,
      await app.jobs.message(projectId, id, request.body, idempotencyOf(request)),
    );
  });

  server.post<JobParams>('/v2/agent/:projectId/job/:id/retry', work, async (request, reply) => {
    const { projectId, id } = request.params;
    return sendWork(
      reply,
      projectId,
      await app.jobs.retry(projectId, id, request.body, idempotencyOf(request)),
    );
  });

  // The API's most frequent request. A poll reads its key and its job in one statement, and an
  // answer stays remembered while the database provably has not changed (jobs/job-polls.ts).
  const polls = app.jobPolls;
  server.get<JobParams>('/v2/agent/:projectId/job/:id', async (request, reply) => {
    const { projectId, id } = request.params;
    const token = await polls.token();
    const keyHash = hashKey(bearerKey(request));
    const remembered = await polls.get(token, keyHash, projectId, id, app.now());
    if (remembered) {
      request.principal = remembered.principal;
      return reply.type(JSON_TYPE).send(remembered.body);
    }
    let found: Awaited<ReturnType<App['jobs']['findWithKey']>> | undefined;
    request.principal = await authorizeProject(request, projectId, {
      keys: app.keys,
      projectExists: app.jobs.projectExists,
      lookUp: async (hash) => {
        found = await app.jobs.findWithKey(projectId, id, hash);
        return found.key;
      },
    });
    const body = JSON.stringify(found!.job());
    polls.set(token, keyHash, id, found!.key!, body);
    return reply.type(JSON_TYPE).send(body);
  });

  server.get<ProjectParams>('/v2/agent/:projectId/jobs', { onRequest: authorize }, async (request) =>
    app.jobs.list(request.params.projectId, request.query),
  );

  server.post<JobParams>('/v2/agent/:projectId/job/:id/archive', { onRequest: authorize }, async (request) =>
    app.jobs.archive(request.params.projectId, request.params.id),
  );

  server.get<JobParams>(
    '/v2/agent/:projectId/job/:id/diff',
    { onRequest: authorize },
    async (request, reply) => {
      const diff = await app.jobs.diff(request.params.projectId, request.params.id);
      return reply.type('text/x-diff; charset=utf-8').send(diff.diff);
    },
  );

  server.get<JobParams>(
    '/v2/agent/:projectId/job/:id/events',
    { onRequest: authorize },
    async (request, reply) => {
      const { projectId, id } = request.params;
      if (!wantsEventStream(request)) return { events: await app.jobs.events(projectId, id, request.query) };
      const { after } = await app.jobs.eventsQuery(projectId, id, request.query);
      return streamJobEvents(request, reply, app, {
        jobId: id,
        after,
        owner: `key:${request.principal!.keyId}`,
      });
    },
  );
}
