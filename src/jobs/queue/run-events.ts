import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { insertRunEvent } from './sql/insert-run-event.ts';

/**
 * Appends an event on behalf of a run, only while `workerId` still holds the same attempt of
 * it: a worker that lost its lease (or whose run was cancelled) writes nothing, even if it has
 * claimed the run again since.
 */
export async function recordRunEvent(
  db: Kysely<Database>,
  event: {
    runId: string;
    jobId: string;
    workerId: string;
    attempt: number;
    type: string;
    data: unknown;
    now: Date;
  },
): Promise<boolean> {
  const result = await db.executeQuery(
    insertRunEvent(db, {
      jobId: event.jobId,
      runId: event.runId,
      type: event.type,
      data: JSON.stringify(event.data ?? {}),
      at: event.now.toISOString(),
      workerId: event.workerId,
      attempt: event.attempt,
    }),
  );
  return Number(result.numAffectedRows ?? 0) > 0;
}
