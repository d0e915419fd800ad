import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';
import { leaseExpired } from '../lease-rule.ts';

/** Running runs whose lease ran out before `now`. */
export const expiredLeasesStatement = (db: Kysely<Database>, now: string) =>
  db.selectFrom('job_runs').select(['id', 'job_id', 'attempts']).where(leaseExpired(now));
