/**
 * The MCP tool `ask_docs {question}` (docs/mcp.mdx, docs/questions.mdx): an ask job, waited for,
 * whose answer comes back with its citations as `path:start-end`, so that a coding agent can
 * ask what the docs and the code say and read the lines it is pointed to.
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { DocwrightClient } from '../client/client.ts';
import { describeJob } from '../client/describe-job.ts';
import type { AgentJob } from '../client/types.ts';
import { answer, tool } from './tool-result.ts';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, waitWithin } from './wait.ts';

/** docs/api/overview.mdx's default prompt bound, as create_docs_job checks it. */
const MAX_QUESTION_CHARS = 100_000;

/** The answer, then its sources one a line: what the calling agent reads first. */
export function answerText(job: AgentJob): string {
  const sources = job.citations.map((c) => `- ${c.path}:${c.startLine}-${c.endLine}`);
  return [job.answer ?? '', ...(sources.length > 0 ? ['', 'Sources:', ...sources] : [])].join('\n');
}

export function registerAskDocs(server: McpServer, client: DocwrightClient, projectId: string): void {
  server.registerTool(
    'ask_docs',
    {
      title: 'Ask the docs',
      description:
        "Asks docwright a question about the project's documentation and the code it documents. The agent " +
        'reads them and answers with citations (file and lines); it changes nothing. Waits for the answer.',
      inputSchema: {
        question: z
          .string()
          .trim()
          .min(1)
          .max(MAX_QUESTION_CHARS)
          .describe('The question, in plain language, e.g. "How is the rate limit configured?"'),
        timeoutSeconds: z
          .number()
          .int()
          .min(1)
          .max(MAX_WAIT_SECONDS)
          .optional()
          .describe(`Longest wait in seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS})`),
      },
    },
    (args, extra) =>
      tool(async () => {
        const created = await client.createJob(
          projectId,
          { prompt: args.question, mode: 'ask' },
          { idempotencyKey: randomUUID() },
        );
        const seconds = args.timeoutSeconds ?? DEFAULT_WAIT_SECONDS;
        const { job, timedOut } = await waitWithin(client, projectId, created.id, seconds, extra);
        if (timedOut) {
          return answer(
            `${describeJob(job)} — still working after ${seconds} s; call wait_for_docs_job with id ${job.id} for the answer`,
            job,
          );
        }
        if (job.status !== 'completed' || job.answer === null) return answer(describeJob(job), job);
        return answer(answerText(job), job);
      }),
  );
}
