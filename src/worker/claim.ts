import { CompiledQuery, type Kysely, sql } from 'kysely';
import { appendEvent } from '../jobs/events.ts';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Store } from '../store/database.ts';
import type { Database, JobRow, JobRunRow } from '../store/schema.ts';
import type { Signals } from '../store/signals.ts';

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
 * SQLite: one UPDATE, in a transaction for the event and the job's read; the database write lock
 * makes it atomic.
 *
 * PostgreSQL: one call of `claim_run` (src/store/migrations/0015-claim-run-function.ts, answering
 * the job too since 0016), one round trip. `FOR UPDATE … SKIP LOCKED` lets any number of workers claim at once without waiting on
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

  const claimed =
    store.dialect === 'postgres'
      ? (
          await store.prepared!<ClaimedRun>(
            CompiledQuery.raw(CLAIM_RUN, [options.workerId, now, leaseUntil, options.projectConcurrency]),
          )
        )[0]
      : await claimOnSqlite(store, options, now, leaseUntil);
  // Not waited for: the run need not wait for its followers to be told.
  if (claimed) void signals.publish({ kind: 'job-event', jobId: claimed.run.job_id }).catch(() => {});
  return claimed;
}

const CLAIM_RUN = 'select run, job from claim_run($1, $2, $3, $4)';

function claimOnSqlite(
  store: Store,
  options: ClaimOptions,
  now: string,
  leaseUntil: string,
): Promise<ClaimedRun | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const { rows } = await trx.executeQuery<JobRunRow>(
      claimingUpdate(trx, {
        workerId: options.workerId,
        leaseUntil,
        now,
        projectConcurrency: options.projectConcurrency,
      }),
    );
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

const claimingUpdate = compiledQuery<{
  workerId: string;
  leaseUntil: string;
  now: string;
  projectConcurrency: number;
}>(['workerId', 'leaseUntil', 'now', 'projectConcurrency'], (db, p) =>
  sql<JobRunRow>`
    update job_runs
       set status = 'running', attempts = attempts + 1,
           lease_owner = ${p.workerId}, lease_expires_at = ${p.leaseUntil},
           started_at = coalesce(started_at, ${p.now})
     where id = (
       select r.id from job_runs r
        where r.status = 'queued'
          and (select count(*) from job_runs x
                where x.project_id = r.project_id and x.status = 'running') < ${p.projectConcurrency}
        order by r.id
        limit 1)
    returning *`.compile(db),
);

/** Every claim on SQLite reads its job: compiled once. */
const jobById = compiledQuery<{ id: string }, JobRow>(['id'], (db, p) =>
  db.selectFrom('jobs').selectAll().where('id', '=', p.id).compile(),
);
