import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

/** Extends a held lease. False means it is no longer ours: the run must stop at once. */
export async function renewLease(
  db: Kysely<Database>,
  lease: { runId: string; workerId: string; until: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('job_runs')
    .set({ lease_expires_at: lease.until.toISOString() })
    .where('id', '=', lease.runId)
    .where('lease_owner', '=', lease.workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Hands a run back to the queue (graceful shutdown). The attempt is not
 * counted against the run: it was interrupted on purpose, not lost.
 */
export async function releaseLease(
  db: Kysely<Database>,
  lease: { runId: string; workerId: string },
): Promise<boolean> {
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
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Runs among `runIds` that `workerId` no longer holds (cancelled, stolen, swept). */
export async function lostRuns(
  db: Kysely<Database>,
  runIds: string[],
  workerId: string,
): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const held = await db
    .selectFrom('job_runs')
    .select('id')
    .where('id', 'in', runIds)
    .where('lease_owner', '=', workerId)
    .where('status', '=', 'running')
    .execute();
  const stillHeld = new Set(held.map((r) => r.id));
  return new Set(runIds.filter((id) => !stillHeld.has(id)));
}
