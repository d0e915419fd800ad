/**
 * The automations API of docs/automations.mdx in /openapi.json: its schemas (from the model's own zod
 * schemas) and its operations, built with openapi.ts's helpers.
 */
import { z } from 'zod';
import {
  automationCreateInput,
  automationUpdateInput,
  RUN_OUTCOMES,
  TRIGGER_TYPES,
} from '../automations/automation.ts';
import { changesInput } from '../jobs/changes.ts';

const automation = automationCreateInput.extend({
  id: z.string().meta({ description: '`aut_` followed by a sortable unique id' }),
  createdAt: z.string(),
});

const runChange = z.object({ repository: z.string() }).catchall(z.unknown());

const run = z.object({
  id: z.string().meta({ description: '`arun_` followed by a sortable unique id' }),
  automationId: z.string(),
  trigger: z.object({
    type: z.enum(TRIGGER_TYPES),
    changes: z.array(runChange),
    scheduledFor: z.string().nullable(),
  }),
  jobId: z.string().nullable(),
  outcome: z.enum(RUN_OUTCOMES),
  reason: z.string().nullable().meta({
    description:
      'Why a run was skipped (`paths`, `label`, `own-change`, `disabled`, `missed`, `rate-limited`), or the code a failed one failed with.',
  }),
  createdAt: z.string(),
});

export const automationSchemas = {
  Automation: automation,
  AutomationList: z.object({ automations: z.array(automation) }),
  AutomationRun: run,
  AutomationRunList: z.object({
    runs: z.array(run),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  }),
  CreateAutomationRequest: automationCreateInput,
  UpdateAutomationRequest: automationUpdateInput,
  TriggerAutomationRequest: z.object({ changes: changesInput.optional() }).strict(),
  TriggerAutomationResponse: z.object({ automationId: z.string(), runId: z.string(), jobId: z.string() }),
  WorkflowTriggerResponse: z.object({ schemaId: z.string(), instanceId: z.string(), jobId: z.string() }),
};

/** Request bodies described as clients send them (defaults optional). */
export const AUTOMATION_REQUEST_SCHEMAS = [
  'CreateAutomationRequest',
  'UpdateAutomationRequest',
  'TriggerAutomationRequest',
] as const;

type SchemaId = keyof typeof automationSchemas;

export function automationPaths(h: {
  projectId: object;
  pathParam: (name: string, description: string) => object;
  json: (id: SchemaId) => object;
  errors: (...statuses: number[]) => object;
  rateLimitHeaders: object;
}) {
  const id = h.pathParam('id', 'The automation id.');
  const query = (name: string, description: string) => ({
    name,
    in: 'query',
    required: false,
    schema: { type: 'string' },
    description,
  });
  return {
    '/v2/agent/{projectId}/automations': {
      get: {
        operationId: 'listAutomations',
        summary: "(extension) The project's automations, newest first",
        parameters: [h.projectId],
        responses: {
          '200': { description: 'The automations', content: h.json('AutomationList') },
          ...h.errors(401, 403, 404, 503),
        },
      },
      post: {
        operationId: 'createAutomation',
        summary: '(extension) Create an automation',
        parameters: [h.projectId],
        requestBody: { required: true, content: h.json('CreateAutomationRequest') },
        responses: {
          '201': { description: 'The automation', content: h.json('Automation') },
          ...h.errors(400, 401, 403, 404, 413, 415, 503),
        },
      },
    },
    '/v2/agent/{projectId}/automations/{id}': {
      get: {
        operationId: 'getAutomation',
        summary: '(extension) An automation',
        parameters: [h.projectId, id],
        responses: {
          '200': { description: 'The automation', content: h.json('Automation') },
          ...h.errors(401, 403, 404, 503),
        },
      },
      patch: {
        operationId: 'updateAutomation',
        summary: '(extension) Change an automation (a trigger is replaced whole)',
        parameters: [h.projectId, id],
        requestBody: { required: true, content: h.json('UpdateAutomationRequest') },
        responses: {
          '200': { description: 'The automation', content: h.json('Automation') },
          ...h.errors(400, 401, 403, 404, 413, 415, 503),
        },
      },
      delete: {
        operationId: 'deleteAutomation',
        summary: '(extension) Delete an automation and its runs (their jobs stay)',
        parameters: [h.projectId, id],
        responses: {
          '200': { description: 'The deleted automation', content: h.json('Automation') },
          ...h.errors(401, 403, 404, 503),
        },
      },
    },
    '/v2/agent/{projectId}/automations/{id}/runs': {
      get: {
        operationId: 'listAutomationRuns',
        summary: "(extension) An automation's runs, newest first",
        parameters: [
          h.projectId,
          id,
          query('limit', '1 to 100 (default 20)'),
          query('cursor', "The previous page's nextCursor"),
        ],
        responses: {
          '200': { description: 'A page of runs', content: h.json('AutomationRunList') },
          ...h.errors(400, 401, 403, 404, 503),
        },
      },
    },
    '/v2/agent/{projectId}/automations/{id}/trigger': {
      post: {
        operationId: 'triggerAutomation',
        summary: '(extension) Run an automation now, optionally with changes; counts against the rate limit',
        parameters: [h.projectId, id],
        requestBody: { required: false, content: h.json('TriggerAutomationRequest') },
        responses: {
          '202': {
            description: 'The run and its job',
            headers: h.rateLimitHeaders,
            content: h.json('TriggerAutomationResponse'),
          },
          ...h.errors(400, 401, 403, 404, 413, 415, 429, 503),
        },
      },
    },
    '/v1/workflow/{projectId}/{automationId}/trigger': {
      post: {
        tags: ['Mintlify v1 compatibility (extension)'],
        operationId: 'v1TriggerWorkflow',
        summary: '(extension) Mintlify v1: the workflow trigger, which runs an automation now',
        parameters: [h.projectId, h.pathParam('automationId', 'The automation id.')],
        requestBody: { required: false, content: h.json('TriggerAutomationRequest') },
        responses: {
          '202': {
            description: 'The run (instanceId) of the automation (schemaId) and its job',
            headers: h.rateLimitHeaders,
            content: h.json('WorkflowTriggerResponse'),
          },
          ...h.errors(400, 401, 403, 404, 413, 415, 429, 503),
        },
      },
    },
  };
}
