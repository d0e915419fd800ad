import type { Kysely } from 'kysely';
import type { Database, JobRunRow } from '../../../store/schema.ts';

/** Fails the runs `ids` (at least one) still in one of `fromStatus`, with `error`; answers those that changed. */
export const failRunsStatement = (
  db: Kysely<Database>,
  p: {
    ids: readonly string[];
    fromStatus: readonly JobRunRow['status'][];
    error: { code: string; message: string };
    at: string;
  },
) =>
  db
    .updateTable('job_runs')
    .set({
      status: 'failed',
      ended_at: p.at,
      lease_owner: null,
      lease_expires_at: null,
      error_code: p.error.code,
      error_message: p.error.message,
    })
    .where('id', 'in', p.ids)
    .where('status', 'in', p.fromStatus)
    .returning(['id', 'job_id']);
