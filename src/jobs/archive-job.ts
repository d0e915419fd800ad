import type { AgentJob } from './agent-job.ts';
import { toAgentJob } from './agent-job.ts';
import { appendEvents } from './events.ts';
import type { JobContext } from './job-context.ts';
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
      // transitions.ts): the other order deadlocked on PostgreSQL with a run recording its usage.
      if (job.status === 'active') {
        // The worker holding a cancelled run loses it at its next check and aborts.
        const runs = await trx
          .updateTable('job_runs')
          .set({ status: 'cancelled', ended_at: timestamp, lease_owner: null, lease_expires_at: null })
          .where('job_id', '=', jobId)
          .where('status', 'in', ['queued', 'running'])
          .returning('id')
          .execute();
        cancelled = runs.map((r) => r.id);
      }
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
