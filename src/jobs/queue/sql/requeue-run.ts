import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';
import { leaseExpired } from '../lease-rule.ts';

/** Puts a running run whose lease is still expired back in the queue (its attempt stays counted). */
export const requeueRunStatement = (db: Kysely<Database>, p: { id: string; now: string }) =>
  db
    .updateTable('job_runs')
    .set({ status: 'queued', lease_owner: null, lease_expires_at: null })
    .where('id', '=', p.id)
    .where(leaseExpired(p.now));
