import type { Kysely } from 'kysely';
import type { Database, JobRunRow } from '../../store/schema.ts';
import { appendEvents } from '../events.ts';
import { enqueueJobMessage } from '../webhook-outbox.ts';
import { failActiveJobsStatement } from './sql/fail-active-jobs.ts';
import { failRunsStatement } from './sql/fail-runs.ts';

/**
 * Fails runs that no worker can finish (lease lost too often, time limit
 * passed) and their jobs, with a stable error code. Only runs still in the
 * given states change; returns the ones that did.
 */
export async function failRuns(
  db: Kysely<Database>,
  runs: Pick<JobRunRow, 'id' | 'job_id'>[],
  error: { code: string; message: string },
  now: Date,
  fromStatus: JobRunRow['status'][],
): Promise<string[]> {
  if (runs.length === 0) return [];
  const at = now.toISOString();
  return db.transaction().execute(async (trx) => {
    const failed = await failRunsStatement(trx, {
      ids: runs.map((r) => r.id),
      fromStatus,
      error,
      at,
    }).execute();
    if (failed.length === 0) return [];
    const failedJobs = await failActiveJobsStatement(trx, {
      ids: failed.map((r) => r.job_id),
      error,
      at,
    }).execute();
    for (const job of failedJobs) {
      await enqueueJobMessage(trx, {
        type: 'job.failed',
        projectId: job.project_id,
        jobId: job.id,
        job,
        at: now,
      });
    }
    await appendEvents(
      trx,
      failed.map((r) => ({ jobId: r.job_id, runId: r.id, type: 'job.failed', data: { error } })),
      now,
    );
    return failed.map((r) => r.id);
  });
}
