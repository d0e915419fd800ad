import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';

/** Fails the jobs `ids` (at least one) that are still active, with `error`; answers them. */
export const failActiveJobsStatement = (
  db: Kysely<Database>,
  p: { ids: readonly string[]; error: { code: string; message: string }; at: string },
) =>
  db
    .updateTable('jobs')
    .set({ status: 'failed', error_code: p.error.code, error_message: p.error.message, updated_at: p.at })
    .where('id', 'in', p.ids)
    .where('status', '=', 'active')
    .returningAll();
