import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import { authorizeProject } from '../../http/auth.ts';
import { setRateLimitHeaders } from '../../http/rate-limit-headers.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'automations' | 'jobs' | 'keys'>;

type ProjectParams = { Params: { projectId: string } };
type AutomationParams = { Params: { projectId: string; id: string } };
type WorkflowParams = { Params: { projectId: string; automationId: string } };

/**
 * The automations API of docs/automations.mdx (same keys and errors as the job API), and Mintlify's workflow
 * trigger. Routes only translate HTTP; the automation service decides.
 */
export function registerAutomationRoutes(server: FastifyInstance, app: AppUses): void {
  const automations = app.automations;
  const authorize = async (request: FastifyRequest) => {
    const { projectId } = request.params as { projectId: string };
    request.principal = await authorizeProject(request, projectId, {
      keys: app.keys,
      projectExists: app.jobs.projectExists,
    });
  };
  const auth = { onRequest: authorize };
  // A trigger starts a job: it counts against the rate limit and reports it (docs/api/rate-limits.mdx), errors included.
  const work = { onRequest: authorize, config: { rateLimitHeaders: true } };
  const base = '/v2/agent/:projectId/automations';

  server.get<ProjectParams>(base, auth, async (request) => ({
    automations: await automations.list(request.params.projectId),
  }));

  server.post<ProjectParams>(base, auth, async (request, reply) => {
    const { projectId } = request.params;
    const created = await automations.create(projectId, request.body);
    return reply
      .status(201)
      .header('location', `/v2/agent/${projectId}/automations/${created.id}`)
      .send(created);
  });

  server.get<AutomationParams>(`${base}/:id`, auth, async (request) =>
    automations.get(request.params.projectId, request.params.id),
  );

  server.patch<AutomationParams>(`${base}/:id`, auth, async (request) =>
    automations.update(request.params.projectId, request.params.id, request.body),
  );

  server.delete<AutomationParams>(`${base}/:id`, auth, async (request) =>
    automations.delete(request.params.projectId, request.params.id),
  );

  server.get<AutomationParams>(`${base}/:id/runs`, auth, async (request) =>
    automations.runs(request.params.projectId, request.params.id, request.query as Record<string, unknown>),
  );

  server.post<AutomationParams>(`${base}/:id/trigger`, work, async (request, reply) => {
    const { projectId, id } = request.params;
    const started = await automations.trigger(projectId, id, request.body);
    setRateLimitHeaders(reply, started.rateLimit);
    return reply
      .status(202)
      .send({ automationId: started.automationId, runId: started.runId, jobId: started.jobId });
  });

  // Mintlify's workflow trigger: a workflow is an automation, an instance its run.
  server.post<WorkflowParams>(
    '/v1/workflow/:projectId/:automationId/trigger',
    work,
    async (request, reply) => {
      const { projectId, automationId } = request.params;
      const started = await automations.trigger(projectId, automationId, request.body);
      setRateLimitHeaders(reply, started.rateLimit);
      return reply
        .status(202)
        .send({ schemaId: started.automationId, instanceId: started.runId, jobId: started.jobId });
    },
  );
}
