/**
 * Mintlify's deprecated v1 agent API (docs/api/mintlify-v1.mdx), for the clients written against it: create
 * answers with the run as an AI SDK UI message stream, get and list answer v1 session objects.
 * Same keys, rate limit, idempotency and problem+json errors as v2, through the same services.
 * The stream only watches the job: a client that leaves does not stop it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { authorizeProject } from '../http/auth.ts';
import { idempotencyOf } from '../http/idempotency.ts';
import { eventStreamRefusal, openEventStream } from '../http/server-sent-events.ts';
import { RATE_LIMIT_WINDOW_SECONDS } from '../jobs/rate-limit.ts';
import { checkRequestedBranch } from '../jobs/requested-branch.ts';
import { headBranch } from '../projects/head-branch.ts';
import { parseOrThrow } from '../validation.ts';
import { UiMessageStreamWriter } from './ui-stream.ts';
import { toJobInput, v1ListQuery } from './v1-request.ts';
import { toV1Sessions } from './v1-session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'jobHistory' | 'jobs' | 'keys' | 'projects'>;

type ProjectParams = { Params: { projectId: string } };
type JobParams = { Params: { projectId: string; id: string } };

export function registerV1Routes(server: FastifyInstance, app: AppUses): void {
  const authorize = async (request: FastifyRequest) => {
    const { projectId } = request.params as { projectId: string };
    request.principal = await authorizeProject(request, projectId, {
      keys: app.keys,
      projectExists: app.jobs.projectExists,
    });
  };
  const projectName = async (projectId: string) => (await app.projects.get(projectId)).name;

  server.post<ProjectParams>(
    '/v1/agent/:projectId/job',
    { onRequest: authorize, config: { rateLimitHeaders: true } },
    async (request, reply) => {
      const { projectId } = request.params;
      const input = toJobInput(request.body);
      const owner = `key:${request.principal!.keyId}`;
      // Refuse before the job exists: a client told 429 must be able to retry without a duplicate.
      const refusal = eventStreamRefusal(request, owner);
      if (refusal) throw refusal;
      if (input.headBranch !== undefined)
        await checkRequestedBranch(
          {
            projects: app.projects,
            ownsBranch: app.jobs.ownsBranch,
            log: request.log,
            allowLinkLocal: app.config.allowLinkLocalRepositories,
          },
          projectId,
          input.headBranch,
        );
      const idempotency = idempotencyOf(request);
      const { job, rateLimit, replayed } = await app.jobs.create(projectId, input.body, idempotency, {
        headBranch: input.headBranch,
      });
      const project = await app.projects.get(projectId);
      const branch = job.branch ?? headBranch(project.settings, job.id);
      const stream = openEventStream(request, reply, {
        owner,
        headers: {
          'x-session-id': job.id,
          'x-branch-name': branch,
          'x-vercel-ai-ui-message-stream': 'v1',
          'ratelimit-policy': `"create";q=${rateLimit.limit};w=${RATE_LIMIT_WINDOW_SECONDS}`,
          ratelimit: `"create";r=${rateLimit.remaining};t=${rateLimit.resetSeconds}`,
          ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
        },
      });
      const writer = new UiMessageStreamWriter();
      const send = async (chunks: object[]) => {
        for (const chunk of chunks) {
          if (!stream.send({ data: JSON.stringify(chunk) })) await stream.drained();
          if (stream.signal.aborted) return false;
        }
        return true;
      };
      try {
        if (!(await send(writer.start(job.id)))) return;
        const feed = app.jobHistory.follow(job.id, {
          signal: stream.signal,
        });
        for await (const events of feed) {
          for (const event of events) if (!(await send(writer.chunks(event)))) return;
        }
        if (stream.signal.aborted) return;
        if (await send(writer.finish())) stream.send({ data: '[DONE]' });
      } catch (error) {
        // The job runs on; the client can follow it with GET.
        request.log.warn({ err: error, jobId: job.id }, 'v1 stream failed; closing it');
      } finally {
        stream.end();
      }
    },
  );

  server.get<JobParams>('/v1/agent/:projectId/job/:id', { onRequest: authorize }, async (request) => {
    const { projectId, id } = request.params;
    const row = await app.jobHistory.row(projectId, id);
    if (!row) throw new DocwrightError('job-not-found', `job ${id} does not exist in this project`);
    const [session] = await toV1Sessions(app.jobHistory, [row], await projectName(projectId));
    return session;
  });

  server.get<ProjectParams>('/v1/agent/:projectId/jobs', { onRequest: authorize }, async (request) => {
    const { projectId } = request.params;
    const query = parseOrThrow(v1ListQuery, request.query, 'query');
    const rows = await app.jobHistory.rows(projectId, query);
    return { allSessions: await toV1Sessions(app.jobHistory, rows, await projectName(projectId)) };
  });
}
