import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';

/** Running runs whose lease has not run out at `now`, with the worker that holds each. */
export const liveLeasesStatement = (db: Kysely<Database>, now: string) =>
  db
    .selectFrom('job_runs')
    .select(['id', 'lease_owner'])
    .where('status', '=', 'running')
    .where('lease_expires_at', '>=', now);
