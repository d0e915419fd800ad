import { compileInsert } from '../store/compiled-insert.ts';
import type { JobRow } from '../store/schema.ts';
import { parseOrThrow } from '../validation.ts';
import { newJobRow, toAgentJob } from './agent-job.ts';
import { postgresCreate } from './create-postgres.ts';
import { appendEvents } from './events.ts';
import type { IdempotentRequest } from './idempotency.ts';
import type { JobContext } from './job-context.ts';
import { chooseModel } from './job-models.ts';
import { runQueue } from './queue/queue-run.ts';
import { changesOfRequest, mayNameChanges } from './request-changes.ts';
import { type CreateJobBody, createJobBody } from './requests.ts';
import { enqueueJobMessage } from './webhook-outbox.ts';
import type { JobWork } from './work-result.ts';
import { type Work, workTransaction } from './work-transaction.ts';

/** A job whose values only stand in for parameters (see compileInsert): every column, in INSERT order. */
const JOB_TEMPLATE: JobRow = {
  id: '',
  project_id: '',
  status: 'active',
  repository: '',
  ref: '',
  model: '',
  draft: null,
  pr_link: null,
  branch: null,
  summary: null,
  error_code: null,
  error_message: null,
  input_tokens: null,
  output_tokens: null,
  created_at: '',
  updated_at: '',
  archived_at: null,
  changes: '[]',
  checks: '[]',
  mode: 'edit',
  answer: null,
  citations: '[]',
};

export interface CreateJobOptions {
  /** The branch the agent pushes to, instead of prefix + short id (v1 `branch`, validated by the caller). */
  headBranch?: string | undefined;
}

/** Creating a job and queueing its first run (docs/api/overview.mdx). */
export function jobCreation(context: JobContext) {
  const { store, db, options } = context;
  const createSchema = createJobBody(options.promptMaxChars);
  const insertJob = compileInsert(db, 'jobs', JOB_TEMPLATE);
  const queueRun = runQueue(db);
  const inTransaction = workTransaction(context);
  const createOnPostgres =
    store.dialect === 'postgres' && store.prepared
      ? postgresCreate({
          store,
          defaultRateLimit: options.defaultRateLimit,
          publish: context.publish,
          now: context.now,
          chooseModel: (project, requested) => chooseModel(project, requested, options.defaultModel),
        })
      : undefined;

  /** The ordinary way: a transaction of the job, its first run, its event and its webhook message. */
  const createWork =
    (projectId: string, body: CreateJobBody, headBranch: string | undefined): Work =>
    async (trx, project, at) => {
      const row = newJobRow({
        projectId,
        repository: project.repository,
        ref: body.ref ?? project.ref,
        model: chooseModel(project, body.model, options.defaultModel),
        draft: body.draft,
        headBranch,
        at,
        mode: body.mode,
      });
      const { changes, listed } = await changesOfRequest(trx, project, body);
      // A caller sees from the start what the job will document (resolved by the first run).
      if (listed) row.changes = JSON.stringify(listed);
      await trx.executeQuery(insertJob(row));
      await enqueueJobMessage(trx, { type: 'job.created', projectId, jobId: row.id, job: row, at });
      const runId = await queueRun(trx, {
        jobId: row.id,
        projectId,
        seq: 1,
        prompt: body.prompt,
        changes,
        at,
      });
      const data = {
        prompt: body.prompt,
        model: row.model,
        ref: row.ref,
        ...(changes.length > 0 && { changes }),
        ...(row.mode === 'ask' && { mode: row.mode }),
      };
      await appendEvents(trx, [{ jobId: row.id, runId, type: 'job.created', data }], at);
      return { job: toAgentJob(row), created: true };
    };

  return async (
    projectId: string,
    rawBody: unknown,
    idempotency?: IdempotentRequest,
    createOptions: CreateJobOptions = {},
  ): Promise<JobWork> => {
    const body = parseOrThrow(createSchema, rawBody);
    const { headBranch } = createOptions;
    // An ask goes the ordinary way: the one-statement create writes edit jobs only.
    if (createOnPostgres && !idempotency && !mayNameChanges(body) && body.mode !== 'ask') {
      const created = await createOnPostgres(projectId, { ...body, headBranch });
      if (created) return created;
    }
    return inTransaction(projectId, idempotency, createWork(projectId, body, headBranch));
  };
}
