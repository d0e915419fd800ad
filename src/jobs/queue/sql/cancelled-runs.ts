import type { Kysely } from 'kysely';
import type { Database } from '../../../store/schema.ts';

/** Which of the runs `ids` (at least one) were cancelled (their job archived). */
export const cancelledRunsStatement = (db: Kysely<Database>, ids: readonly string[]) =>
  db.selectFrom('job_runs').select('id').where('id', 'in', ids).where('status', '=', 'cancelled');
