/** The v1 session object (docs/api/mintlify-v1.mdx): a job as Mintlify's deprecated v1 API showed it. */
import { z } from 'zod';
import { type AgentJob, toAgentJob } from '../jobs/agent-job.ts';
import type { JobHistory, JobRow } from '../jobs/job-history.ts';

/** The v1 session object as it is served, and described in `/openapi.json`. */
export const v1SessionSchema = z.object({
  sessionId: z.string().meta({ description: 'The job id (job_…).' }),
  subdomain: z.string().meta({ description: "The project's name as a slug." }),
  branch: z.string().nullable(),
  haulted: z.boolean().meta({ description: 'True unless the job is active (the v1 spelling).' }),
  haultReason: z.enum(['completed', 'error', 'processing', 'interrupted']),
  pullRequestLink: z.string().nullable(),
  messageToUser: z.string().nullable().meta({ description: "The job's summary, or its error." }),
  todos: z.array(z.never()).meta({ description: 'Always empty.' }),
  userId: z.null(),
  title: z.string().meta({ description: 'The first line of the first instruction.' }),
  createdAt: z.iso.datetime(),
});
export type V1Session = z.output<typeof v1SessionSchema>;

const HAULT_REASONS = {
  completed: 'completed',
  failed: 'error',
  active: 'processing',
  archived: 'interrupted',
} as const;

/** The project's name as a subdomain-style slug. */
export const slug = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63) || 'docs';

/** A session's title: the first line of its first instruction, shortened. */
const titleOf = (prompt: string | undefined): string => {
  const line = (prompt ?? '').trim().split('\n')[0]!.trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
};

export function toV1Session(job: AgentJob, projectName: string, firstPrompt: string | undefined): V1Session {
  return {
    sessionId: job.id,
    subdomain: slug(projectName),
    branch: job.branch,
    haulted: job.status !== 'active',
    haultReason: HAULT_REASONS[job.status],
    pullRequestLink: job.prLink,
    // A failed job has no summary; its error is what the user needs to hear.
    messageToUser: job.summary ?? job.error?.message ?? null,
    todos: [],
    userId: null,
    title: titleOf(firstPrompt),
    createdAt: job.createdAt,
  };
}

/** Sessions for `rows`, with their titles read in one query. */
export async function toV1Sessions(
  history: Pick<JobHistory, 'firstPrompts'>,
  rows: JobRow[],
  projectName: string,
): Promise<V1Session[]> {
  if (rows.length === 0) return [];
  const prompts = await history.firstPrompts(rows.map((r) => r.id));
  return rows.map((row) => toV1Session(toAgentJob(row), projectName, prompts.get(row.id)));
}
