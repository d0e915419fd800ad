import { type Kysely, sql } from 'kysely';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Store } from '../store/database.ts';
import type { Database, JobRunRow } from '../store/schema.ts';
import type { Signals } from '../store/signals.ts';
import { appendEvent, appendEvents } from './events.ts';
import { finishRunInOneStatement } from './finish-run-postgres.ts';
import { storedChecks } from './job-checks.ts';
import type { RunOutcome } from './run-outcome.ts';
import { enqueueJobMessage } from './webhook-outbox.ts';

/**
 * Appends an event on behalf of a run, only while `workerId` still holds the same attempt of
 * it: a worker that lost its lease (or whose run was cancelled) writes nothing, even if it has
 * claimed the run again since.
 */
export async function recordRunEvent(
  db: Kysely<Database>,
  event: {
    runId: string;
    jobId: string;
    workerId: string;
    attempt: number;
    type: string;
    data: unknown;
    now: Date;
  },
): Promise<boolean> {
  const result = await db.executeQuery(
    insertRunEvent(db, {
      jobId: event.jobId,
      runId: event.runId,
      type: event.type,
      data: JSON.stringify(event.data ?? {}),
      at: event.now.toISOString(),
      workerId: event.workerId,
      attempt: event.attempt,
    }),
  );
  return Number(result.numAffectedRows ?? 0) > 0;
}

const insertRunEvent = compiledQuery<{
  jobId: string;
  runId: string;
  type: string;
  data: string;
  at: string;
  workerId: string;
  attempt: number;
}>(['jobId', 'runId', 'type', 'data', 'at', 'workerId', 'attempt'], (db, p) =>
  sql`
    insert into job_events (job_id, run_id, type, data, created_at)
    select ${p.jobId}, ${p.runId}, ${p.type}, ${p.data}, ${p.at}
     where exists (select 1 from job_runs
                    where id = ${p.runId} and lease_owner = ${p.workerId}
                      and attempts = ${p.attempt} and status = 'running')`.compile(db),
);

/** Ends a run the worker holds (the lease's owner and attempt), with its outcome. */
const endRun = compiledQuery<{
  id: string;
  workerId: string;
  attempts: number;
  status: 'succeeded' | 'failed';
  at: string;
  summary: string | null;
  errorCode: string | null;
  errorMessage: string | null;
}>(['id', 'workerId', 'attempts', 'status', 'at', 'summary', 'errorCode', 'errorMessage'], (db, p) =>
  db
    .updateTable('job_runs')
    .set({
      status: p.status,
      ended_at: p.at,
      lease_owner: null,
      lease_expires_at: null,
      summary: p.summary,
      error_code: p.errorCode,
      error_message: p.errorMessage,
    })
    .where('id', '=', p.id)
    .where('lease_owner', '=', p.workerId)
    .where('attempts', '=', p.attempts)
    .where('status', '=', 'running')
    .compile(),
);

/**
 * Moves an active job to `completed`: the run's pull request and branch replace the job's only
 * when the run has them (a run that changed nothing keeps an earlier run's link).
 */
const completeJob = compiledQuery<{
  id: string;
  at: string;
  changes: string | null;
  checks: string | null;
  prLink: string | null;
  branch: string | null;
  summary: string | null;
  answer: string | null;
  citations: string | null;
}>(['id', 'at', 'changes', 'checks', 'prLink', 'branch', 'summary', 'answer', 'citations'], (db, p) =>
  db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'completed',
      updated_at: p.at,
      changes: eb.fn.coalesce(eb.val(p.changes), eb.ref('changes')),
      checks: eb.fn.coalesce(eb.val(p.checks), eb.ref('checks')),
      pr_link: eb.fn.coalesce(eb.val(p.prLink), eb.ref('pr_link')),
      branch: eb.fn.coalesce(eb.val(p.branch), eb.ref('branch')),
      summary: p.summary,
      answer: eb.fn.coalesce(eb.val(p.answer), eb.ref('answer')),
      citations: eb.fn.coalesce(eb.val(p.citations), eb.ref('citations')),
      error_code: null,
      error_message: null,
    }))
    .where('id', '=', p.id)
    .where('status', '=', 'active')
    .compile(),
);

/** Moves an active job to `failed`, with the run's error. */
const failJob = compiledQuery<{
  id: string;
  at: string;
  changes: string | null;
  checks: string | null;
  errorCode: string;
  errorMessage: string;
}>(['id', 'at', 'changes', 'checks', 'errorCode', 'errorMessage'], (db, p) =>
  db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'failed',
      updated_at: p.at,
      changes: eb.fn.coalesce(eb.val(p.changes), eb.ref('changes')),
      checks: eb.fn.coalesce(eb.val(p.checks), eb.ref('checks')),
      error_code: p.errorCode,
      error_message: p.errorMessage,
    }))
    .where('id', '=', p.id)
    .where('status', '=', 'active')
    .compile(),
);

/**
 * Ends a run with its outcome and moves the job out of `active`, in one
 * transaction and only while `workerId` holds the attempt `run` is (its
 * `attempts`). Returns false (and writes nothing) when the lease was lost, the
 * run was cancelled, or it was claimed again since (by this worker too).
 * The job's followers (streams, the dashboard, the webhook dispatcher) are told of its last event.
 * On PostgreSQL a plain ending is one statement that tells them as it commits
 * (src/jobs/finish-run-postgres.ts).
 */
export async function finishRun(
  { store, signals }: { store: Store; signals: Pick<Signals, 'publish'> },
  finish: RunFinish,
): Promise<boolean> {
  // An answer is stored the transaction's way too: the one statement writes no answer.
  const plain = !(finish.outcome.status === 'completed' && (finish.outcome.diff || finish.outcome.answer));
  if (store.dialect === 'postgres' && plain) {
    const ended = await finishRunInOneStatement(store, finish);
    if (ended !== 'subscribed') return ended === 'finished';
  }
  const finished = await finishRunInTransaction(store.db, finish);
  if (finished) await signals.publish({ kind: 'job-event', jobId: finish.run.job_id }).catch(() => {});
  return finished;
}

interface RunFinish {
  run: JobRunRow;
  workerId: string;
  outcome: RunOutcome;
  now: Date;
}

async function finishRunInTransaction(db: Kysely<Database>, finish: RunFinish): Promise<boolean> {
  const { run, outcome } = finish;
  const at = finish.now.toISOString();
  return db.transaction().execute(async (trx) => {
    const ended = await trx.executeQuery(
      endRun(trx, {
        id: run.id,
        workerId: finish.workerId,
        attempts: run.attempts,
        status: outcome.status === 'completed' ? 'succeeded' : 'failed',
        at,
        // An answer is what a follow-up question of the job is told of this run (its history).
        summary: outcome.status === 'completed' ? (outcome.answer?.text ?? outcome.summary) : null,
        errorCode: outcome.status === 'failed' ? outcome.error.code : null,
        errorMessage: outcome.status === 'failed' ? outcome.error.message : null,
      }),
    );
    if (Number(ended.numAffectedRows ?? 0) === 0) return false;

    // Usage is not part of the outcome: it was recorded turn by turn (src/jobs/usage.ts).
    const changes = outcome.changes ? JSON.stringify(outcome.changes) : null;
    const checks = outcome.checks ? storedChecks(outcome.checks) : null;
    const changed = await trx.executeQuery(
      outcome.status === 'completed'
        ? completeJob(trx, {
            id: run.job_id,
            at,
            changes,
            checks,
            prLink: outcome.prLink,
            branch: outcome.branch,
            summary: outcome.summary,
            answer: outcome.answer?.text ?? null,
            citations: outcome.answer ? JSON.stringify(outcome.answer.citations) : null,
          })
        : failJob(trx, {
            id: run.job_id,
            at,
            changes,
            checks,
            errorCode: outcome.error.code,
            errorMessage: outcome.error.message,
          }),
    );
    if (Number(changed.numAffectedRows ?? 0) > 0) {
      await enqueueJobMessage(trx, {
        type: outcome.status === 'completed' ? 'job.completed' : 'job.failed',
        projectId: run.project_id,
        jobId: run.job_id,
        at: finish.now,
      });
    }
    if (outcome.status === 'completed' && outcome.diff) {
      const { diff } = outcome;
      await trx
        .insertInto('run_diffs')
        .values({
          run_id: run.id,
          job_id: run.job_id,
          base_commit: diff.base,
          head_commit: diff.head,
          diff: diff.text,
          truncated: Number(diff.truncated),
          files: diff.files,
          additions: diff.additions,
          deletions: diff.deletions,
          created_at: at,
        })
        .execute();
    }
    await appendEvent(
      trx,
      {
        jobId: run.job_id,
        runId: run.id,
        type: outcome.status === 'completed' ? 'job.completed' : 'job.failed',
        data:
          outcome.status === 'completed'
            ? {
                prLink: outcome.prLink,
                branch: outcome.branch,
                summary: outcome.summary,
                ...(outcome.answer && { answer: outcome.answer.text, citations: outcome.answer.citations }),
              }
            : { error: outcome.error },
      },
      finish.now,
    );
    return true;
  });
}

/**
 * Fails runs that no worker can finish (lease lost too often, time limit
 * passed) and their jobs, with a stable error code. Only runs still in the
 * given states change; returns the ones that did.
 */
export async function failRuns(
  db: Kysely<Database>,
  runs: Pick<JobRunRow, 'id' | 'job_id'>[],
  error: { code: string; message: string },
  now: Date,
  fromStatus: JobRunRow['status'][],
): Promise<string[]> {
  if (runs.length === 0) return [];
  const at = now.toISOString();
  return db.transaction().execute(async (trx) => {
    const failed = await trx
      .updateTable('job_runs')
      .set({
        status: 'failed',
        ended_at: at,
        lease_owner: null,
        lease_expires_at: null,
        error_code: error.code,
        error_message: error.message,
      })
      .where(
        'id',
        'in',
        runs.map((r) => r.id),
      )
      .where('status', 'in', fromStatus)
      .returning(['id', 'job_id'])
      .execute();
    if (failed.length === 0) return [];
    const failedJobs = await trx
      .updateTable('jobs')
      .set({ status: 'failed', error_code: error.code, error_message: error.message, updated_at: at })
      .where(
        'id',
        'in',
        failed.map((r) => r.job_id),
      )
      .where('status', '=', 'active')
      .returningAll()
      .execute();
    for (const job of failedJobs) {
      await enqueueJobMessage(trx, {
        type: 'job.failed',
        projectId: job.project_id,
        jobId: job.id,
        job,
        at: now,
      });
    }
    await appendEvents(
      trx,
      failed.map((r) => ({ jobId: r.job_id, runId: r.id, type: 'job.failed', data: { error } })),
      now,
    );
    return failed.map((r) => r.id);
  });
}
