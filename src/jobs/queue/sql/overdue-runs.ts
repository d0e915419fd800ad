import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';

/** Runs not yet ended that first started before `startedBefore`: past the job time limit. */
export const overdueRunsStatement = (db: Kysely<Database>, startedBefore: string) =>
  db
    .selectFrom('job_runs')
    .select(['id', 'job_id'])
    .where('status', 'in', ['queued', 'running'])
    .where('started_at', '<', startedBefore);
