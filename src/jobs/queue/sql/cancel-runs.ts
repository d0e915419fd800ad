import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';

/** Cancels the job's queued or running run, ending any lease on it; answers the runs cancelled. */
export const cancelRunsStatement = (db: Kysely<Database>, p: { jobId: string; at: string }) =>
  db
    .updateTable('job_runs')
    .set({ status: 'cancelled', ended_at: p.at, lease_owner: null, lease_expires_at: null })
    .where('job_id', '=', p.jobId)
    .where('status', 'in', ['queued', 'running'])
    .returning('id');
