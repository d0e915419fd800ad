import type { Kysely } from 'kysely';
import type { Database, RunDiffRow } from '../store/schema.ts';

/** The diff the job's last committing run stored (run ids sort by creation). */
export async function latestDiff(db: Kysely<Database>, jobId: string): Promise<RunDiffRow | undefined> {
  return db
    .selectFrom('run_diffs')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('run_id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
