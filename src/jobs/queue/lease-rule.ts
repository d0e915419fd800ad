import { type Expression, type SqlBool, sql } from 'kysely';

/**
 * One claim of a run: the worker and the attempt it claimed. The attempt matters: a worker that
 * lost a run and claimed it again holds the new attempt only, never the old one.
 */
export interface Lease {
  runId: string;
  workerId: string;
  /** `job_runs.attempts` as the claim set it. */
  attempt: number;
}

/**
 * The lease rule, the one place it is written: a run is ours while it is running under our
 * worker id and the attempt we claimed. An expired lease still holds until the sweeper takes
 * the run back (`leaseExpired`): a slow heartbeat loses nothing a sweep has not yet given away.
 *
 * A condition on the unqualified columns of `job_runs` (`id`, `lease_owner`, `attempts`,
 * `status`), for a Kysely `where` or a `sql` template; the values are parameters, so the
 * statements that use it can be compiled once (src/store/compiled-query.ts).
 */
export function leaseHeld(lease: Lease): Expression<SqlBool> {
  return sql<SqlBool>`(id = ${lease.runId} and lease_owner = ${lease.workerId} and attempts = ${lease.attempt} and status = 'running')`;
}

/** A running run whose lease ran out before `now` (ISO text): the sweeper's to take back. */
export function leaseExpired(now: string): Expression<SqlBool> {
  return sql<SqlBool>`(status = 'running' and lease_expires_at < ${now})`;
}
