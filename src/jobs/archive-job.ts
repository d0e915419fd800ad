import type { AgentJob } from './agent-job.ts';
import { toAgentJob } from './agent-job.ts';
import { appendEvents } from './events.ts';
import type { JobContext } from './job-context.ts';
import { cancelRuns } from './queue/cancel.ts';
import { enqueueJobMessage } from './webhook-outbox.ts';

/** Archiving a job: idempotent; archiving an active job cancels its queued or running run. */
export function jobArchiving(context: JobContext) {
  const { db, now, publish, findJob } = context;
  return async (projectId: string, jobId: string): Promise<AgentJob> => {
    let cancelled: string[] = [];
    const archived = await db.transaction().execute(async (trx) => {
      const job = await findJob(projectId, jobId, trx);
      if (job.status === 'archived') return toAgentJob(job);
      const at = now();
      const timestamp = at.toISOString();
      const changes = { status: 'archived' as const, archived_at: timestamp, updated_at: timestamp };
      // The run before the job, as every transaction that writes both does (usage.ts,
      // queue/finish.ts): the other order deadlocked on PostgreSQL with a run recording its usage.
      // The worker holding a cancelled run loses it at its next check and aborts.
      if (job.status === 'active') cancelled = await cancelRuns(trx, jobId, at);
      await trx.updateTable('jobs').set(changes).where('id', '=', jobId).execute();
      await appendEvents(trx, [{ jobId, type: 'job.archived', data: { previousStatus: job.status } }], at);
      const archivedRow = { ...job, ...changes };
      await enqueueJobMessage(trx, { type: 'job.archived', projectId, jobId, job: archivedRow, at });
      return toAgentJob(archivedRow);
    });
    for (const runId of cancelled) await publish({ kind: 'run-cancelled', runId });
    await publish({ kind: 'job-event', jobId });
    return archived;
  };
}
