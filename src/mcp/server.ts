/**
 * The MCP server of docs/mcp.mdx: one project's docs jobs as tools for coding agents, built on the
 * typed client (src/client), so it speaks to any docwright server over its HTTP API. Each
 * result is a one-line summary for people plus the JSON the API answered; an API error is a
 * tool error carrying the problem's message.
 */
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { DocwrightClient } from '../client/client.ts';
import { describeJob } from '../client/describe-job.ts';
import type { AgentJob, ChangeInput } from '../client/types.ts';
import { JOB_STATUSES } from '../jobs/agent-job.ts';
import { VERSION } from '../version.ts';
import { registerAskDocs } from './ask-docs.ts';
import { answer, tool } from './tool-result.ts';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, waitWithin } from './wait.ts';

export { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS };
/**
 * docs/api/overview.mdx's default bound, checked here before anything is sent: the MCP server's own promise to
 * the agent calling it, whatever the server behind allows (`DOCWRIGHT_PROMPT_MAX_CHARS`).
 */
export const MAX_PROMPT_CHARS = 100_000;

const jobId = z.string().min(1).max(100).describe('The job id (job_…) that create_docs_job returned');
const prompt = z
  .string()
  .trim()
  .min(1)
  .max(MAX_PROMPT_CHARS)
  .describe('What to change in the documentation, in plain language, with the context a writer needs');

const withHint = (job: AgentJob) =>
  job.status === 'active'
    ? `${describeJob(job)} — the agent is working; call wait_for_docs_job to get the outcome`
    : describeJob(job);

/** The server checks each entry exactly (400 naming it); here only the shape the model fills in. */
const changes = z
  .array(
    z.object({
      repository: z
        .string()
        .describe("A context repository's name, or docs for the project's own repository"),
      pullRequest: z.number().int().optional().describe('A pull/merge request number'),
      commit: z.string().optional().describe('A commit sha'),
      range: z.string().optional().describe('<base>..<head>'),
    }),
  )
  .max(20)
  .optional()
  .describe(
    'Code changes to document (one of pullRequest, commit or range each). Pull request and commit URLs of configured repositories in the prompt count too.',
  );

export function createMcpServer(client: DocwrightClient, projectId: string): McpServer {
  const server = new McpServer({ name: 'docwright', version: VERSION });

  server.registerTool(
    'create_docs_job',
    {
      title: 'Create a docs job',
      description:
        "Asks docwright's docs agent to change the project's documentation. It works in the background " +
        'and opens a pull request with the edit; follow it with wait_for_docs_job.',
      inputSchema: {
        prompt,
        ref: z
          .string()
          .min(1)
          .max(200)
          .optional()
          .describe('Base branch to start from (default: the project ref)'),
        changes,
      },
    },
    (args) =>
      tool(async () => {
        const job = await client.createJob(
          projectId,
          {
            prompt: args.prompt,
            ...(args.ref !== undefined && { ref: args.ref }),
            ...(args.changes && { changes: args.changes as ChangeInput[] }),
          },
          { idempotencyKey: randomUUID() },
        );
        return answer(withHint(job), job);
      }),
  );

  server.registerTool(
    'get_docs_job',
    {
      title: 'Get a docs job',
      description: 'The current state of a docs job: status, pull request link, summary, error.',
      inputSchema: { id: jobId },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      tool(async () => {
        const job = await client.getJob(projectId, args.id);
        return answer(withHint(job), job);
      }),
  );

  server.registerTool(
    'list_docs_jobs',
    {
      title: 'List docs jobs',
      description: "The project's docs jobs, newest first.",
      inputSchema: {
        status: z.enum(JOB_STATUSES).optional().describe('Only jobs in this state'),
        limit: z.number().int().min(1).max(100).optional().describe('How many (1–100, default 20)'),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      tool(async () => {
        const page = await client.listJobs(projectId, { status: args.status, limit: args.limit });
        const counts = JOB_STATUSES.map((s) => [s, page.jobs.filter((j) => j.status === s).length] as const)
          .filter(([, n]) => n > 0)
          .map(([s, n]) => `${n} ${s}`);
        const summary =
          page.jobs.length === 0
            ? 'no jobs'
            : `${page.jobs.length} job${page.jobs.length === 1 ? '' : 's'}, newest first (${counts.join(', ')})` +
              (page.nextCursor ? '; more exist' : '');
        return answer(summary, page);
      }),
  );

  server.registerTool(
    'send_docs_job_message',
    {
      title: 'Send a follow-up to a docs job',
      description:
        'A follow-up instruction for a job that has ended: the agent continues on the same branch and ' +
        'pull request. Follow it with wait_for_docs_job.',
      inputSchema: { id: jobId, prompt, changes },
    },
    (args) =>
      tool(async () => {
        const job = await client.sendMessage(
          projectId,
          args.id,
          { prompt: args.prompt, ...(args.changes && { changes: args.changes as ChangeInput[] }) },
          { idempotencyKey: randomUUID() },
        );
        return answer(withHint(job), job);
      }),
  );

  server.registerTool(
    'wait_for_docs_job',
    {
      title: 'Wait for a docs job',
      description:
        `Waits until the job ends (completed, failed or archived) or timeoutSeconds pass ` +
        `(default ${DEFAULT_WAIT_SECONDS}), then returns it. Still active: call it again.`,
      inputSchema: {
        id: jobId,
        timeoutSeconds: z
          .number()
          .int()
          .min(1)
          .max(MAX_WAIT_SECONDS)
          .optional()
          .describe(`Longest wait in seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS})`),
      },
      annotations: { readOnlyHint: true },
    },
    (args, extra) =>
      tool(async () => {
        const seconds = args.timeoutSeconds ?? DEFAULT_WAIT_SECONDS;
        const { job, timedOut } = await waitWithin(client, projectId, args.id, seconds, extra);
        if (!timedOut) return answer(describeJob(job), job);
        return answer(
          `${describeJob(job)} — still working after ${seconds} s; call wait_for_docs_job again`,
          job,
        );
      }),
  );

  registerAskDocs(server, client, projectId);
  return server;
}
