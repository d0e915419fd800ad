import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';

/**
 * Makes the lease of `workerId` on a running run expire at `expiredAt` (whatever the attempt:
 * the worker is gone, all its attempts with it), so that the next sweep takes the run back.
 */
export const endLeaseStatement = (
  db: Kysely<Database>,
  p: { id: string; workerId: string; expiredAt: string },
) =>
  db
    .updateTable('job_runs')
    .set({ lease_expires_at: p.expiredAt })
    .where('id', '=', p.id)
    .where('lease_owner', '=', p.workerId)
    .where('status', '=', 'running');
