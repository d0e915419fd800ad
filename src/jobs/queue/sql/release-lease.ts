import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';
import { type Lease, leaseHeld } from '../lease-rule.ts';

/** Puts a held run back in the queue, not counting the attempt. */
export const releaseLeaseStatement = (db: Kysely<Database>, lease: Lease) =>
  db
    .updateTable('job_runs')
    .set((eb) => ({
      status: 'queued',
      lease_owner: null,
      lease_expires_at: null,
      attempts: eb('attempts', '-', 1),
    }))
    .where(leaseHeld(lease));
