import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';
import { type Lease, leaseHeld } from '../lease-rule.ts';

/** Which of `leases` (at least one) are still held: their runs, with the attempt held. */
export const heldLeasesStatement = (db: Kysely<Database>, leases: readonly Lease[]) =>
  db
    .selectFrom('job_runs')
    .select(['id', 'attempts'])
    .where((eb) => eb.or(leases.map(leaseHeld)));
