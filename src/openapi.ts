import { z } from 'zod';
import { AUTOMATION_REQUEST_SCHEMAS, automationPaths, automationSchemas } from './api/openapi-automations.ts';
import { v1CreateBody, v1ListQuery } from './compat/v1-request.ts';
import { v1SessionSchema } from './compat/v1-session.ts';
import { problemSchema } from './http/problem.ts';
import { agentJobSchema } from './jobs/agent-job.ts';
import { jobEventSchema } from './jobs/events.ts';
import { createJobBody, listEventsQuery, listJobsQuery, messageBody, retryBody } from './jobs/requests.ts';

/**
 * `/openapi.json`, generated from the zod schemas that validate requests and
 * describe responses. Paths are listed here; every schema comes from code.
 */
export function buildOpenApiDocument(options: { promptMaxChars: number; version: string }) {
  const registry = z.registry<{ id: string }>();
  const jobList = z.object({
    jobs: z.array(agentJobSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  });
  const eventList = z.object({ events: z.array(jobEventSchema) });
  const schemas = {
    AgentJob: agentJobSchema,
    JobList: jobList,
    JobEvent: jobEventSchema,
    JobEventList: eventList,
    Error: problemSchema,
    CreateJobRequest: createJobBody(options.promptMaxChars),
    MessageRequest: messageBody(options.promptMaxChars),
    RetryRequest: retryBody.meta({ description: '(extension) No fields: an empty object, or no body.' }),
    V1CreateRequest: v1CreateBody,
    V1Session: v1SessionSchema,
    V1SessionList: z.object({ allSessions: z.array(v1SessionSchema) }),
    ...automationSchemas,
  };
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const generated = z.toJSONSchema(registry, {
    uri: (id) => `#/components/schemas/${id}`,
    io: 'output',
  }).schemas;
  const components: Record<string, unknown> = {};
  for (const [id, schema] of Object.entries(generated)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
    components[id] = rest;
  }
  // Request bodies are described as clients send them (defaults optional).
  for (const id of [
    'CreateJobRequest',
    'MessageRequest',
    'V1CreateRequest',
    ...AUTOMATION_REQUEST_SCHEMAS,
  ] as const) {
    const { $schema: _s, ...rest } = z.toJSONSchema(schemas[id], { io: 'input' }) as Record<string, unknown>;
    components[id] = rest;
  }

  const ref = (id: keyof typeof schemas) => ({ $ref: `#/components/schemas/${id}` });
  const json = (id: keyof typeof schemas) => ({ 'application/json': { schema: ref(id) } });
  const problem = (description: string) => ({
    description,
    content: { 'application/problem+json': { schema: ref('Error') } },
  });
  const errors = (...statuses: number[]) =>
    Object.fromEntries(statuses.map((s) => [String(s), problem(errorDescriptions[s] ?? 'Error')]));
  const pathParam = (name: string, description: string) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description,
  });
  const projectId = pathParam('projectId', 'Your project ID, shown on the API keys page of the dashboard.');
  const jobId = pathParam('id', 'The job id.');
  const queryParams = (schema: z.ZodObject) =>
    Object.entries(schema.shape).map(([name, field]) => ({
      name,
      in: 'query',
      required: false,
      schema: z.toJSONSchema(field as z.ZodType, { io: 'input', unrepresentable: 'any' }),
    }));
  const rateLimitHeaders = {
    RateLimit: {
      description: '`"create";r=<remaining>;t=<seconds until a use frees up>`',
      schema: { type: 'string' },
    },
    'RateLimit-Policy': { description: '`"create";q=<limit>;w=3600`', schema: { type: 'string' } },
  };
  const idempotencyKey = {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: 255 },
    description:
      '(extension) A repeat with the same key and body within 24 h returns the original response and creates nothing.',
  };

  // Mintlify's deprecated v1 agent API, for the clients written against it: tagged apart, so that
  // the v2 operations read exactly as Mintlify's own description.
  const v1 = { tags: [V1_TAG] };
  const v1Paths = {
    '/v1/agent/{projectId}/job': {
      post: {
        ...v1,
        operationId: 'v1CreateJob',
        summary: '(extension) Mintlify v1: create a job and follow its run',
        description:
          'The instruction is the user messages (system messages are added as guidance); `branch` names the head branch, `asDraft` (default true) the pull request draft state, `model` `sonnet`/`opus` the project model. Same keys, rate limit, Idempotency-Key and errors as v2.',
        parameters: [projectId, idempotencyKey],
        requestBody: { required: true, content: json('V1CreateRequest') },
        responses: {
          '200': {
            description:
              'The run as an AI SDK UI message stream (Server-Sent Events), ending when the run ends; a client that disconnects does not stop the job.',
            headers: {
              'X-Session-Id': { description: 'The job id', schema: { type: 'string' } },
              'X-Branch-Name': { description: 'The head branch', schema: { type: 'string' } },
              ...rateLimitHeaders,
            },
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...errors(400, 401, 403, 404),
          '409': problem('The branch exists and docwright did not create it (branch-exists)'),
          ...errors(413, 415, 422, 429, 503),
        },
      },
    },
    '/v1/agent/{projectId}/job/{id}': {
      get: {
        ...v1,
        operationId: 'v1GetJob',
        summary: '(extension) Mintlify v1: a job as a v1 session',
        parameters: [projectId, jobId],
        responses: {
          '200': { description: 'The session', content: json('V1Session') },
          ...errors(401, 403, 404, 503),
        },
      },
    },
    '/v1/agent/{projectId}/jobs': {
      get: {
        ...v1,
        operationId: 'v1ListJobs',
        summary: '(extension) Mintlify v1: the jobs as v1 sessions, newest first',
        parameters: [projectId, ...queryParams(v1ListQuery)],
        responses: {
          '200': { description: 'A page of sessions', content: json('V1SessionList') },
          ...errors(400, 401, 403, 404, 503),
        },
      },
    },
  };

  return {
    openapi: '3.1.0',
    info: {
      title: 'docwright API',
      version: options.version,
      description:
        "Agent jobs that edit documentation repositories. Compatible with Mintlify's Agent API v2.",
    },
    security: [{ bearerAuth: [] }],
    paths: {
      '/v2/agent/{projectId}/job': {
        post: {
          operationId: 'createJob',
          summary: 'Create agent job',
          parameters: [projectId, idempotencyKey],
          requestBody: { required: true, content: json('CreateJobRequest') },
          responses: {
            '201': {
              description: 'Agent job created',
              headers: {
                Location: { description: 'URL of the new job', schema: { type: 'string' } },
                ...rateLimitHeaders,
              },
              content: json('AgentJob'),
            },
            ...errors(400, 401, 403, 404, 413, 415, 422, 429, 503),
          },
        },
      },
      '/v2/agent/{projectId}/job/{id}': {
        get: {
          operationId: 'getJob',
          summary: 'Get agent job',
          parameters: [projectId, jobId],
          responses: {
            '200': { description: 'Agent job details', content: json('AgentJob') },
            ...errors(401, 403, 404, 503),
          },
        },
      },
      '/v2/agent/{projectId}/job/{id}/message': {
        post: {
          operationId: 'sendMessage',
          summary: 'Send follow-up message',
          parameters: [projectId, jobId, idempotencyKey],
          requestBody: { required: true, content: json('MessageRequest') },
          responses: {
            '200': { description: 'Follow-up queued', headers: rateLimitHeaders, content: json('AgentJob') },
            ...errors(400, 401, 403, 404, 409, 413, 415, 422, 429, 503),
          },
        },
      },
      '/v2/agent/{projectId}/job/{id}/retry': {
        post: {
          operationId: 'retryJob',
          summary:
            '(extension) Retry a failed job: its last instruction runs again as a new run of the same job, on its branch. Counts against the rate limit like a follow-up.',
          parameters: [projectId, jobId, idempotencyKey],
          requestBody: { required: false, content: json('RetryRequest') },
          responses: {
            '200': { description: 'Retry queued', headers: rateLimitHeaders, content: json('AgentJob') },
            ...errors(400, 401, 403, 404),
            '409': problem(
              'The job is active (job-busy), archived (job-archived) or completed (job-not-failed)',
            ),
            ...errors(413, 415, 422, 429, 503),
          },
        },
      },
      '/v2/agent/{projectId}/jobs': {
        get: {
          operationId: 'listJobs',
          summary: '(extension) List jobs, newest first',
          parameters: [projectId, ...queryParams(listJobsQuery)],
          responses: {
            '200': { description: 'A page of jobs', content: json('JobList') },
            ...errors(400, 401, 403, 404, 503),
          },
        },
      },
      '/v2/agent/{projectId}/job/{id}/archive': {
        post: {
          operationId: 'archiveJob',
          summary: '(extension) Archive a job; cancels it when active. Idempotent.',
          parameters: [projectId, jobId],
          responses: {
            '200': { description: 'The archived job', content: json('AgentJob') },
            ...errors(401, 403, 404, 503),
          },
        },
      },
      '/v2/agent/{projectId}/job/{id}/events': {
        get: {
          operationId: 'listJobEvents',
          summary: "(extension) The job's transcript",
          parameters: [projectId, jobId, ...queryParams(listEventsQuery)],
          responses: {
            '200': {
              description:
                'Events, oldest first. With `Accept: text/event-stream`, a live Server-Sent Events stream; each SSE id is the event id, so reconnecting with Last-Event-ID resumes.',
              content: { ...json('JobEventList'), 'text/event-stream': { schema: { type: 'string' } } },
            },
            ...errors(400, 401, 403, 404, 503),
          },
        },
      },
      '/v2/agent/{projectId}/job/{id}/diff': {
        get: {
          operationId: 'getJobDiff',
          summary: "(extension) The unified diff of the job's branch against its base",
          parameters: [projectId, jobId],
          responses: {
            '200': {
              description:
                'As the last committing run left it, stored at commit time; capped at 1 MiB, a cut diff ends with a line starting `# docwright: diff truncated`.',
              content: { 'text/x-diff': { schema: { type: 'string' } } },
            },
            ...errors(401, 403, 404, 503),
          },
        },
      },
      ...v1Paths,
      ...automationPaths({ projectId, pathParam, json, errors, rateLimitHeaders }),
    },
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An admin API key (dwk_…) of the project.',
        },
      },
    },
  };
}

const V1_TAG = 'Mintlify v1 compatibility (extension)';

const errorDescriptions: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing, malformed, unknown, revoked or expired API key',
  403: 'The key belongs to another project',
  404: 'Project or job not found',
  409: 'The job is busy or archived',
  413: 'Request body over 256 KiB',
  415: 'Request body is not application/json',
  422: 'Idempotency-Key reused with a different request',
  429: 'Rate limit exceeded (rate-limited), or the project has spent its monthly token budget (token-budget-exceeded); Retry-After says when to try again',
  503: 'Database unavailable; retry after Retry-After seconds',
};
