import type { Kysely } from 'kysely';
import { appendEvents } from '../jobs/events.ts';
import { failRuns } from '../jobs/transitions.ts';
import type { Database } from '../store/schema.ts';

export interface SweepOptions {
  now: Date;
  /** Claims a run may have before a lost lease fails it (`worker-lost`). */
  maxAttempts: number;
  /** No run goes on longer than this after it first started (requeued attempts included). */
  jobTimeLimitMs: number;
  /** No run waits longer than this in the queue before it first starts. */
  queueTimeLimitMs: number;
}

export interface SweepResult {
  requeued: string[];
  lost: string[];
  timedOut: string[];
  /** Runs that never started within the queue time limit. */
  neverStarted: string[];
}

/**
 * Recovers from crashes: a run whose lease expired goes back to the queue,
 * or fails with `worker-lost` once its attempts are used up; a run past the
 * job time limit, counted from when it first started, fails with
 * `time-limit-exceeded`, whatever holds it; a run that waited in the queue past
 * the queue time limit without ever starting fails with
 * `queue-time-limit-exceeded` (a job waiting behind others is not charged for
 * its wait). Safe to run in every process at once: each change is conditional
 * on the state it read.
 */
export async function sweepRuns(db: Kysely<Database>, options: SweepOptions): Promise<SweepResult> {
  const now = options.now.toISOString();
  const startedBefore = new Date(options.now.getTime() - options.jobTimeLimitMs).toISOString();
  const queuedBefore = new Date(options.now.getTime() - options.queueTimeLimitMs).toISOString();

  const overdue = await db
    .selectFrom('job_runs')
    .select(['id', 'job_id'])
    .where('status', 'in', ['queued', 'running'])
    .where('started_at', '<', startedBefore)
    .execute();
  const timedOut = await failRuns(db, overdue, timeLimitError(options.jobTimeLimitMs), options.now, [
    'queued',
    'running',
  ]);

  const waiting = await db
    .selectFrom('job_runs')
    .select(['id', 'job_id'])
    .where('status', '=', 'queued')
    .where('started_at', 'is', null)
    .where('created_at', '<', queuedBefore)
    .execute();
  const neverStarted = await failRuns(
    db,
    waiting,
    queueTimeLimitError(options.queueTimeLimitMs),
    options.now,
    ['queued'],
  );

  const expired = await db
    .selectFrom('job_runs')
    .select(['id', 'job_id', 'attempts'])
    .where('status', '=', 'running')
    .where('lease_expires_at', '<', now)
    .execute();
  const exhausted = expired.filter((r) => r.attempts >= options.maxAttempts);
  const lost = await failRuns(
    db,
    exhausted,
    {
      code: 'worker-lost',
      message: `the worker running this job stopped responding ${options.maxAttempts} times`,
    },
    options.now,
    ['running'],
  );

  const retry = expired.filter((r) => r.attempts < options.maxAttempts);
  const requeued: string[] = [];
  for (const run of retry) {
    const result = await db
      .updateTable('job_runs')
      .set({ status: 'queued', lease_owner: null, lease_expires_at: null })
      .where('id', '=', run.id)
      .where('status', '=', 'running')
      .where('lease_expires_at', '<', now)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) continue;
    requeued.push(run.id);
    await appendEvents(
      db,
      [
        {
          jobId: run.job_id,
          runId: run.id,
          type: 'run.requeued',
          data: { reason: 'lease-expired', attempts: run.attempts },
        },
      ],
      options.now,
    );
  }
  return { requeued, lost, timedOut, neverStarted };
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

/** Why a run that went on too long failed (the worker's own time limit says the same). */
export const timeLimitError = (limitMs: number) => ({
  code: 'time-limit-exceeded',
  message: `the job did not finish within the time limit (${minutes(limitMs)} from when it started; DOCWRIGHT_JOB_TIME_LIMIT_MINUTES)`,
});

const queueTimeLimitError = (limitMs: number) => ({
  code: 'queue-time-limit-exceeded',
  message: `the job waited ${minutes(limitMs)} in the queue without a worker taking it (DOCWRIGHT_QUEUE_TIME_LIMIT_MINUTES): check that a worker is running (docwright serve, or docwright worker beside serve --no-worker) and send the instruction again`,
});
