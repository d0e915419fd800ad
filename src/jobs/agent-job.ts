import { z } from 'zod';
import { newJobId } from '../ids.ts';
import type { JobRow } from '../store/schema.ts';
import { jobChangeSchema, parseJobChanges } from './changes.ts';
import { jobCheckSchema, parseJobChecks } from './job-checks.ts';
import { citationSchema, JOB_MODES, type JobMode, parseCitations } from './job-mode.ts';

export const JOB_STATUSES = ['active', 'completed', 'archived', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The job record of docs/api/overview.mdx. Every field is always present; unknown values are null. */
export const agentJobSchema = z.object({
  id: z.string().meta({ description: '`job_` followed by a sortable unique id.' }),
  status: z.enum(JOB_STATUSES),
  source: z.object({
    repository: z.string().meta({ description: 'Full URL of the repository the job works on.' }),
    ref: z.string().meta({ description: 'Base branch the agent starts from and the pull request targets.' }),
  }),
  model: z.string().meta({
    description:
      'The model used, as provider/model-id. An empty string when no model is configured (the job then fails with model-not-configured): the field is a non-null string in the Mintlify schema, so it is never null.',
  }),
  prLink: z
    .url()
    .nullable()
    .meta({ description: 'Pull request URL; null while active and when no files changed.' }),
  createdAt: z.iso.datetime(),
  archivedAt: z.iso.datetime().nullable(),
  updatedAt: z.iso.datetime().meta({ description: '(extension) Last change.' }),
  branch: z.string().nullable().meta({ description: '(extension) Head branch pushed by the agent.' }),
  summary: z.string().nullable().meta({
    description:
      "(extension) The agent's summary of what it changed; for an ask job, the first line of its answer.",
  }),
  error: z
    .object({ code: z.string(), message: z.string() })
    .nullable()
    .meta({ description: '(extension) Why the job failed; `code` is a stable slug.' }),
  usage: z
    .object({ inputTokens: z.number().int(), outputTokens: z.number().int() })
    .nullable()
    .meta({ description: '(extension) Model tokens consumed so far.' }),
  changes: z.array(jobChangeSchema).meta({
    description:
      '(extension) The code changes the job documents, `[]` when none: listed from creation with what the request tells (`sha` and `title` null, `url` when the host tells it), complete once a run has resolved them through their host before the model started.',
  }),
  checks: z.array(jobCheckSchema).meta({
    description:
      "(extension) The last verification of the job's changes (docs/verification.mdx): each check, its status and its findings; `[]` before the first verification.",
  }),
  mode: z.enum(JOB_MODES).meta({
    description:
      '(extension) `edit`: the job changes the docs and opens a pull request; `ask`: it answers a question from the docs and the code and changes nothing (docs/questions.mdx).',
  }),
  answer: z.string().nullable().meta({
    description:
      "(extension) An ask job's answer (Markdown); null for edit jobs and until the agent answers.",
  }),
  citations: z.array(citationSchema).meta({
    description:
      '(extension) The files and lines the answer cites, each checked to exist when the agent answered; `[]` for edit jobs.',
  }),
});
export type AgentJob = z.output<typeof agentJobSchema>;

export function toAgentJob(row: JobRow): AgentJob {
  return {
    id: row.id,
    status: row.status,
    source: { repository: row.repository, ref: row.ref },
    model: row.model,
    // A follow-up run makes the job active again while the row still remembers the old link.
    prLink: row.status === 'active' ? null : row.pr_link,
    createdAt: row.created_at,
    archivedAt: row.archived_at,
    updatedAt: row.updated_at,
    branch: row.branch,
    summary: row.summary,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    usage:
      row.input_tokens !== null || row.output_tokens !== null
        ? { inputTokens: row.input_tokens ?? 0, outputTokens: row.output_tokens ?? 0 }
        : null,
    changes: parseJobChanges(row.changes),
    checks: parseJobChecks(row.checks),
    mode: row.mode,
    answer: row.answer,
    citations: parseCitations(row.citations),
  };
}

/** The row of a job just created: active, with nothing done yet. */
export function newJobRow(job: {
  projectId: string;
  repository: string;
  ref: string;
  model: string;
  draft: boolean | undefined;
  /** The head branch the caller chose (v1 `branch`); otherwise the worker names one. */
  headBranch: string | undefined;
  at: Date;
  /** Default `edit`. */
  mode?: JobMode | undefined;
}): JobRow {
  const timestamp = job.at.toISOString();
  return {
    id: newJobId(),
    project_id: job.projectId,
    status: 'active',
    repository: job.repository,
    ref: job.ref,
    model: job.model,
    draft: job.draft === undefined ? null : Number(job.draft),
    pr_link: null,
    branch: job.headBranch ?? null,
    summary: null,
    error_code: null,
    error_message: null,
    input_tokens: null,
    output_tokens: null,
    created_at: timestamp,
    updated_at: timestamp,
    archived_at: null,
    changes: '[]',
    checks: '[]',
    mode: job.mode ?? 'edit',
    answer: null,
    citations: '[]',
  };
}
