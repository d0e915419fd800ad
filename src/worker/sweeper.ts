import type { Kysely } from 'kysely';
import { appendEvents } from '../jobs/events.ts';
import { failRuns } from '../jobs/transitions.ts';
import type { Database } from '../store/schema.ts';

export interface SweepOptions {
  now: Date;
  /** Claims a run may have before a lost lease fails it (`worker-lost`). */
  maxAttempts: number;
  /** No run stays queued or running longer than this after it was queued. */
  jobTimeLimitMs: number;
}

export interface SweepResult {
  requeued: string[];
  lost: string[];
  timedOut: string[];
}

/**
 * Recovers from crashes: a run whose lease expired goes back to the queue,
 * or fails with `worker-lost` once its attempts are used up; a run past the
 * job time limit fails with `time-limit-exceeded`, whatever holds it. Safe to
 * run in every process at once: each change is conditional on the state it
 * read.
 */
export async function sweepRuns(db: Kysely<Database>, options: SweepOptions): Promise<SweepResult> {
  const now = options.now.toISOString();
  const deadline = new Date(options.now.getTime() - options.jobTimeLimitMs).toISOString();

  const overdue = await db
    .selectFrom('job_runs')
    .select(['id', 'job_id'])
    .where('status', 'in', ['queued', 'running'])
    .where('created_at', '<', deadline)
    .execute();
  const minutes = Math.round(options.jobTimeLimitMs / 60_000);
  const timedOut = await failRuns(
    db,
    overdue,
    { code: 'time-limit-exceeded', message: `the job did not finish within the time limit (${minutes} min)` },
    options.now,
    ['queued', 'running'],
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
  return { requeued, lost, timedOut };
}
