import type { Kysely } from 'kysely';
import type { Database, JobRow } from '../store/schema.ts';

/** Jobs of the whole database by status (the `docwright_jobs` gauge); a status without jobs is absent. */
export async function jobCountsByStatus(db: Kysely<Database>): Promise<Map<JobRow['status'], number>> {
  const rows = await db
    .selectFrom('jobs')
    .select((eb) => ['status', eb.fn.countAll().as('count')])
    .groupBy('status')
    .execute();
  return new Map(rows.map((r) => [r.status, Number(r.count)]));
}

/** Runs of the whole database waiting for a worker (the `docwright_queue_depth` gauge). */
export async function queueDepth(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('job_runs')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('status', '=', 'queued')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
