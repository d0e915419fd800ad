import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';
import { type Lease, leaseHeld } from '../lease-rule.ts';

/** Extends the lease to `until`, while it is held. */
export const renewLeaseStatement = (db: Kysely<Database>, lease: Lease & { until: Date }) =>
  db.updateTable('job_runs').set({ lease_expires_at: lease.until.toISOString() }).where(leaseHeld(lease));
