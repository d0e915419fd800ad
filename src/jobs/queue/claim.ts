import type { Kysely } from 'kysely';
import type { Store } from '../../store/database.ts';
import type { Database, JobRow, JobRunRow } from '../../store/schema.ts';
import type { Signals } from '../../store/signals.ts';
import { appendEvent } from '../events.ts';
import { claimRunOnPostgres } from './sql/claim-run-postgres.ts';
import { claimRunOnSqlite } from './sql/claim-run-sqlite.ts';
import { jobById } from './sql/job-by-id.ts';

export interface ClaimOptions {
  workerId: string;
  now: Date;
  leaseMs: number;
  /** Most runs of one project running at once, across all workers. */
  projectConcurrency: number;
}

/** A run a worker has claimed, and the job it belongs to (read in the claim: no round trip of its own). */
export interface ClaimedRun {
  run: JobRunRow;
  job: JobRow;
}

/**
 * Claims the oldest queued run whose project has a free slot, taking a lease
 * on it, and records its `run.started` event in the same transaction (one
 * commit fewer per run than writing it after); then the job's followers
 * (streams, the dashboard) are told of the event.
 *
 * SQLite: one UPDATE (sql/claim-run-sqlite.ts), in a transaction for the event and the job's
 * read; the database write lock makes it atomic.
 *
 * PostgreSQL: one call of `claim_run` (claim_run.sql, which says how it works), one round trip.
 * `FOR UPDATE … SKIP LOCKED` lets any number of workers claim at once without waiting on
 * each other. Locking the project row as well makes claims of one project take turns, and the
 * running count is read by a separate statement after the locks are held, so it sees every
 * committed claim (a single statement's snapshot could predate a rival's commit).
 */
export async function claimNextRun(
  { store, signals }: { store: Store; signals: Pick<Signals, 'publish'> },
  options: ClaimOptions,
): Promise<ClaimedRun | undefined> {
  const now = options.now.toISOString();
  const leaseUntil = new Date(options.now.getTime() + options.leaseMs).toISOString();
  const parameters = {
    workerId: options.workerId,
    now,
    leaseUntil,
    projectConcurrency: options.projectConcurrency,
  };
  const claimed =
    store.dialect === 'postgres'
      ? (await store.prepared!<ClaimedRun>(claimRunOnPostgres(parameters)))[0]
      : await claimOnSqlite(store, options, parameters);
  // Not waited for: the run need not wait for its followers to be told.
  if (claimed) void signals.publish({ kind: 'job-event', jobId: claimed.run.job_id }).catch(() => {});
  return claimed;
}

function claimOnSqlite(
  store: Store,
  options: ClaimOptions,
  parameters: Parameters<typeof claimRunOnSqlite>[1],
): Promise<ClaimedRun | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const { rows } = await trx.executeQuery<JobRunRow>(claimRunOnSqlite(trx, parameters));
    const run = rows[0];
    if (!run) return undefined;
    await recordStart(trx, run, options);
    const { rows: jobs } = await trx.executeQuery(jobById(trx, { id: run.job_id }));
    return { run, job: jobs[0]! };
  });
}

/** The transcript's `run.started`: which attempt of which run, and which worker holds it. */
async function recordStart(trx: Kysely<Database>, run: JobRunRow, options: ClaimOptions): Promise<void> {
  await appendEvent(
    trx,
    {
      jobId: run.job_id,
      runId: run.id,
      type: 'run.started',
      data: { attempt: run.attempts, workerId: options.workerId, seq: run.seq },
    },
    options.now,
  );
}
