import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

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

/** Extends a held lease. False means it is no longer ours: the run must stop at once. */
export async function renewLease(db: Kysely<Database>, lease: Lease & { until: Date }): Promise<boolean> {
  const result = await db
    .updateTable('job_runs')
    .set({ lease_expires_at: lease.until.toISOString() })
    .where('id', '=', lease.runId)
    .where('lease_owner', '=', lease.workerId)
    .where('attempts', '=', lease.attempt)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Hands a run back to the queue (graceful shutdown). The attempt is not
 * counted against the run: it was interrupted on purpose, not lost.
 */
export async function releaseLease(db: Kysely<Database>, lease: Lease): Promise<boolean> {
  const result = await db
    .updateTable('job_runs')
    .set((eb) => ({
      status: 'queued',
      lease_owner: null,
      lease_expires_at: null,
      attempts: eb('attempts', '-', 1),
    }))
    .where('id', '=', lease.runId)
    .where('lease_owner', '=', lease.workerId)
    .where('attempts', '=', lease.attempt)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The leases among `leases` that are no longer held (cancelled, stolen, swept, claimed again). */
export async function lostLeases<L extends Lease>(db: Kysely<Database>, leases: L[]): Promise<L[]> {
  if (leases.length === 0) return [];
  const held = await db
    .selectFrom('job_runs')
    .select(['id', 'lease_owner', 'attempts'])
    .where(
      'id',
      'in',
      leases.map((l) => l.runId),
    )
    .where('status', '=', 'running')
    .execute();
  const rows = new Map(held.map((r) => [r.id, r]));
  return leases.filter((l) => {
    const row = rows.get(l.runId);
    return row?.lease_owner !== l.workerId || Number(row.attempts) !== l.attempt;
  });
}
