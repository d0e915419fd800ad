import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import type { Lease } from './lease-rule.ts';
import { cancelledRunsStatement } from './sql/cancelled-runs.ts';
import { heldLeasesStatement } from './sql/held-leases.ts';
import { releaseLeaseStatement } from './sql/release-lease.ts';
import { renewLeaseStatement } from './sql/renew-lease.ts';

export type { Lease } from './lease-rule.ts';

/** Extends a held lease. False means it is no longer ours: the run must stop at once. */
export async function renewLease(db: Kysely<Database>, lease: Lease & { until: Date }): Promise<boolean> {
  const result = await renewLeaseStatement(db, lease).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Hands a run back to the queue (graceful shutdown). The attempt is not
 * counted against the run: it was interrupted on purpose, not lost.
 */
export async function releaseLease(db: Kysely<Database>, lease: Lease): Promise<boolean> {
  const result = await releaseLeaseStatement(db, lease).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The leases among `leases` that are no longer held (cancelled, stolen, swept, claimed again). */
export async function lostLeases<L extends Lease>(db: Kysely<Database>, leases: L[]): Promise<L[]> {
  if (leases.length === 0) return [];
  const held = await heldLeasesStatement(db, leases).execute();
  // Owner and attempt were matched by the rule; a run held under another attempt is not ours.
  const heldKeys = new Set(held.map((r) => `${r.id}#${Number(r.attempts)}`));
  return leases.filter((l) => !heldKeys.has(`${l.runId}#${l.attempt}`));
}

/** Which of the runs `runIds` were cancelled (their job archived), as opposed to taken from us. */
export async function cancelledRuns(db: Kysely<Database>, runIds: readonly string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await cancelledRunsStatement(db, runIds).execute();
  return new Set(rows.map((r) => r.id));
}
