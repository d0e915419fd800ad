import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';

/** Queued runs that never started and were queued before `queuedBefore`: past the queue time limit. */
export const neverStartedRunsStatement = (db: Kysely<Database>, queuedBefore: string) =>
  db
    .selectFrom('job_runs')
    .select(['id', 'job_id'])
    .where('status', '=', 'queued')
    .where('started_at', 'is', null)
    .where('created_at', '<', queuedBefore);
