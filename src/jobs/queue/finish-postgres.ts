/**
 * Ending a run on PostgreSQL in one round trip: one statement ends the run, moves its job out of
 * `active`, appends the job's last event and announces it (the job's update announces itself too:
 * migration 0014; one more notification costs its commit nothing), conditional on the lease as `finishRun` is
 * (finish.ts), whose transaction took six round trips for the same (BEGIN, the run,
 * the job, the webhook endpoints, the event, COMMIT).
 *
 * Only a plain ending takes this way: one with a diff to keep (a run that committed: it ran for
 * minutes, a round trip more or less is nothing to it) goes the transaction's way, as does one
 * whose project has an endpoint that wants the job's webhook, because the message is built from
 * the job row as the ending left it. The statement finds such an endpoint in the same snapshot in
 * which it would write, and then writes nothing: the caller takes the transaction's way.
 */
import type { Store } from '../../store/database.ts';
import type { JobRunRow } from '../../store/schema.ts';
import { storedChecks } from '../job-checks.ts';
import type { RunOutcome } from '../run-outcome.ts';
import { endRunAndJob } from './sql/end-run-and-job.ts';

/** What the statement did: ended the run, found it no longer held, or left it for the transaction. */
export type OneStatementEnding = 'finished' | 'lease-lost' | 'subscribed';

export async function finishRunInOneStatement(
  store: Store,
  finish: { run: JobRunRow; workerId: string; outcome: RunOutcome; now: Date },
): Promise<OneStatementEnding> {
  const { run, outcome } = finish;
  const completed = outcome.status === 'completed';
  const type = completed ? 'job.completed' : 'job.failed';
  const [answer] = await store.prepared!<{ ended: boolean; subscribed: boolean }>(
    endRunAndJob(store.db, {
      runId: run.id,
      jobId: run.job_id,
      projectId: run.project_id,
      workerId: finish.workerId,
      attempts: run.attempts,
      runStatus: completed ? 'succeeded' : 'failed',
      jobStatus: completed ? 'completed' : 'failed',
      at: finish.now.toISOString(),
      summary: completed ? outcome.summary : null,
      errorCode: completed ? null : outcome.error.code,
      errorMessage: completed ? null : outcome.error.message,
      changes: outcome.changes ? JSON.stringify(outcome.changes) : null,
      checks: outcome.checks ? storedChecks(outcome.checks) : null,
      prLink: completed ? outcome.prLink : null,
      branch: completed ? outcome.branch : null,
      type,
      data: JSON.stringify(
        completed
          ? { prLink: outcome.prLink, branch: outcome.branch, summary: outcome.summary }
          : { error: outcome.error },
      ),
    }),
  );
  if (answer!.subscribed) return 'subscribed';
  return answer!.ended ? 'finished' : 'lease-lost';
}
