import type { Transaction } from 'kysely';
import { DocwrightError } from '../errors.ts';
import type { Database, JobRow, ProjectRow } from '../store/schema.ts';
import { parseOrThrow } from '../validation.ts';
import { toAgentJob } from './agent-job.ts';
import { type ChangeRequest, type JobChange, parseChangeRequests, parseJobChanges } from './changes.ts';
import { appendEvents } from './events.ts';
import type { IdempotentRequest } from './idempotency.ts';
import type { JobContext } from './job-context.ts';
import { chooseModel } from './job-models.ts';
import { runQueue } from './queue/queue-run.ts';
import { changesOfRequest } from './request-changes.ts';
import { messageBody, retryBody } from './requests.ts';
import type { JobWork } from './work-result.ts';
import { workTransaction } from './work-transaction.ts';

/** The next run of a finished job, as a follow-up or a retry asks for it. */
interface NextRun {
  seq: number;
  prompt: string;
  changes: readonly ChangeRequest[];
  /** The job's `changes` once the follow-up added some (pendingJobChanges). */
  listed?: JobChange[];
  event: { type: string; data: unknown };
  /** A new base for the job (a retry of a job that never pushed takes the project's current one). */
  base?: { repository: string; ref: string };
}

/**
 * The base a retry runs on when it is not the job's: a job that never pushed a branch has
 * nothing built on its old base, so it takes the project's repository and ref as they are now
 * (after `project update --ref`, which is how a job that failed `ref-not-found` is mended).
 */
function retryBase(
  project: Pick<ProjectRow, 'repository' | 'ref'>,
  job: Pick<JobRow, 'branch' | 'repository' | 'ref'>,
): { repository: string; ref: string } | undefined {
  if (job.branch !== null) return undefined;
  if (job.ref === project.ref && job.repository === project.repository) return undefined;
  return { repository: project.repository, ref: project.ref };
}

async function lastRun(trx: Transaction<Database>, jobId: string) {
  const last = await trx
    .selectFrom('job_runs')
    .select(['seq', 'prompt', 'changes'])
    .where('job_id', '=', jobId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return { seq: Number(last.seq), prompt: last.prompt, changes: parseChangeRequests(last.changes) };
}

/** A job that can take another run: `job-busy` while it runs, `job-archived` once archived. */
async function findFinishedJob(
  context: JobContext,
  projectId: string,
  jobId: string,
  trx: Transaction<Database>,
) {
  const job = await context.findJob(projectId, jobId, trx);
  if (job.status === 'active') {
    throw new DocwrightError('job-busy', 'the job is still running; send the message after it ends');
  }
  if (job.status === 'archived')
    throw new DocwrightError('job-archived', 'the job is archived and takes no more messages');
  return job;
}

/** Queueing the next run of a finished job and making the job active again. */
function jobContinuation(context: JobContext) {
  const queueRun = runQueue(context.db);
  return async (trx: Transaction<Database>, project: ProjectRow, job: JobRow, at: Date, next: NextRun) => {
    const { seq, prompt, changes } = next;
    const runId = await queueRun(trx, { jobId: job.id, projectId: project.id, seq, prompt, changes, at });
    const update = {
      status: 'active' as const,
      error_code: null,
      error_message: null,
      updated_at: at.toISOString(),
      // A job created before any model was configured takes the one configured now.
      ...(job.model === '' && { model: chooseModel(project, undefined, context.options.defaultModel) }),
      ...(next.listed && { changes: JSON.stringify(next.listed) }),
      ...next.base,
    };
    await trx.updateTable('jobs').set(update).where('id', '=', job.id).execute();
    await appendEvents(trx, [{ jobId: job.id, runId, ...next.event }], at);
    return { job: toAgentJob({ ...job, ...update }), created: false };
  };
}

/** Follow-ups and retries: another run of a finished job (docs/api/overview.mdx states). */
export function jobFollowUps(context: JobContext) {
  const messageSchema = messageBody(context.options.promptMaxChars);
  const inTransaction = workTransaction(context);
  const continueJob = jobContinuation(context);

  return {
    /** Queues a follow-up run on a finished job, with a new instruction. */
    async message(
      projectId: string,
      jobId: string,
      rawBody: unknown,
      idempotency?: IdempotentRequest,
      /**
       * `within`: runs in the transaction that queues the run, once the job is known to take it,
       * with the new run's `seq`; what it throws undoes the follow-up (a pull request comment
       * claims itself here, so that it starts one follow-up at most: docs/pull-request-comments.mdx).
       */
      options: { within?: (trx: Transaction<Database>, seq: number) => Promise<void> } = {},
    ): Promise<JobWork> {
      const body = parseOrThrow(messageSchema, rawBody);
      return inTransaction(projectId, idempotency, async (trx, project, at) => {
        const job = await findFinishedJob(context, projectId, jobId, trx);
        const last = await lastRun(trx, jobId);
        await options.within?.(trx, last.seq + 1);
        const known = parseJobChanges(job.changes);
        const { changes, listed } = await changesOfRequest(trx, project, body, last.changes, known);
        const added = changes.length > last.changes.length;
        return continueJob(trx, project, job, at, {
          seq: last.seq + 1,
          prompt: body.prompt,
          changes,
          ...(listed && { listed }),
          event: { type: 'job.message', data: { prompt: body.prompt, ...(added && { changes }) } },
        });
      });
    },

    /**
     * **(extension)** Runs a failed job's last instruction again, as a new run of the same job (on
     * its branch, told how the failed run ended). Counts against the rate limit like a follow-up.
     */
    async retry(
      projectId: string,
      jobId: string,
      rawBody: unknown,
      idempotency?: IdempotentRequest,
    ): Promise<JobWork> {
      parseOrThrow(retryBody, rawBody ?? {});
      return inTransaction(projectId, idempotency, async (trx, project, at) => {
        const job = await findFinishedJob(context, projectId, jobId, trx);
        if (job.status !== 'failed') {
          throw new DocwrightError(
            'job-not-failed',
            'only a failed job can be retried; this one completed: send a follow-up message to change it',
          );
        }
        const last = await lastRun(trx, jobId);
        const base = retryBase(project, job);
        const rebased = base && { ref: base.ref, previousRef: job.ref };
        return continueJob(trx, project, job, at, {
          seq: last.seq + 1,
          prompt: last.prompt,
          changes: last.changes,
          event: { type: 'job.retried', data: { prompt: last.prompt, retryOf: last.seq, ...rebased } },
          ...(base && { base }),
        });
      });
    },
  };
}
