import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { cancelRunsStatement } from './sql/cancel-runs.ts';

/**
 * Cancels the job's unfinished run (archiving an active job), in the caller's transaction;
 * answers the runs cancelled. The worker holding one loses its lease at its next check and
 * aborts (`cancelledRuns` in lease.ts tells it why).
 */
export async function cancelRuns(trx: Kysely<Database>, jobId: string, at: Date): Promise<string[]> {
  const runs = await cancelRunsStatement(trx, { jobId, at: at.toISOString() }).execute();
  return runs.map((r) => r.id);
}
