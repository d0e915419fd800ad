import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { appendEvents } from '../events.ts';
import { failRuns } from './fail-runs.ts';
import { endLeaseStatement } from './sql/end-lease.ts';
import { expiredLeasesStatement } from './sql/expired-leases.ts';
import { liveLeasesStatement } from './sql/live-leases.ts';
import { neverStartedRunsStatement } from './sql/never-started-runs.ts';
import { overdueRunsStatement } from './sql/overdue-runs.ts';
import { requeueRunStatement } from './sql/requeue-run.ts';

export interface SweepOptions {
  now: Date;
  /** Claims a run may have before a lost lease fails it (`worker-lost`). */
  maxAttempts: number;
  /** No run goes on longer than this after it first started (requeued attempts included). */
  jobTimeLimitMs: number;
  /** No run waits longer than this in the queue before it first starts. */
  queueTimeLimitMs: number;
  /**
   * The process id of the worker a lease names when that worker is certainly gone (see
   * src/worker/worker-identity.ts), else undefined. Its runs are recovered at once, not when the
   * lease expires.
   */
  goneWorker?: (workerId: string) => number | undefined;
}

export interface SweepResult {
  requeued: string[];
  /** Runs (requeued or lost) whose worker's process was gone: recovered before their lease expired. */
  workerGone: string[];
  lost: string[];
  timedOut: string[];
  /** Runs that never started within the queue time limit. */
  neverStarted: string[];
}

/**
 * Recovers from crashes: a run whose lease expired, or whose worker's process is
 * certainly gone, goes back to the queue, or fails with `worker-lost` once its
 * attempts are used up; a run past the
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

  const overdue = await overdueRunsStatement(db, startedBefore).execute();
  const timedOut = await failRuns(db, overdue, timeLimitError(options.jobTimeLimitMs), options.now, [
    'queued',
    'running',
  ]);

  const waiting = await neverStartedRunsStatement(db, queuedBefore).execute();
  const neverStarted = await failRuns(
    db,
    waiting,
    queueTimeLimitError(options.queueTimeLimitMs),
    options.now,
    ['queued'],
  );

  const workerGone = options.goneWorker
    ? await endLeasesOfGoneWorkers(db, options.goneWorker, options.now)
    : new Map();

  const expired = await expiredLeasesStatement(db, now).execute();
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
    // The requeue and its event commit together: a claim in between would otherwise record its
    // run.started before the run.requeued that let it claim.
    const done = await db.transaction().execute(async (trx) => {
      const result = await requeueRunStatement(trx, { id: run.id, now }).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await appendEvents(
        trx,
        [
          {
            jobId: run.job_id,
            runId: run.id,
            type: 'run.requeued',
            data: workerGone.has(run.id)
              ? { reason: 'worker-gone', attempts: run.attempts, ...workerGone.get(run.id) }
              : { reason: 'lease-expired', attempts: run.attempts },
          },
        ],
        options.now,
      );
      return true;
    });
    if (done) requeued.push(run.id);
  }
  return { requeued, workerGone: [...workerGone.keys()], lost, timedOut, neverStarted };
}

/**
 * Ends the leases whose worker is certainly gone (they expire now), so that the sweep recovers
 * their runs at once; returns the runs, each with the worker and its process.
 */
async function endLeasesOfGoneWorkers(
  db: Kysely<Database>,
  goneWorker: (workerId: string) => number | undefined,
  now: Date,
): Promise<Map<string, { workerId: string; pid: number }>> {
  const held = await liveLeasesStatement(db, now.toISOString()).execute();
  const ended = new Map<string, { workerId: string; pid: number }>();
  for (const run of held) {
    const pid = run.lease_owner === null ? undefined : goneWorker(run.lease_owner);
    if (pid === undefined) continue;
    const result = await endLeaseStatement(db, {
      id: run.id,
      workerId: run.lease_owner!,
      expiredAt: new Date(now.getTime() - 1).toISOString(),
    }).executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) ended.set(run.id, { workerId: run.lease_owner!, pid });
  }
  return ended;
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
