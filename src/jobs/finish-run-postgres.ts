/**
 * Ending a run on PostgreSQL in one round trip: one statement ends the run, moves its job out of
 * `active`, appends the job's last event and announces it (the job's update announces itself too:
 * migration 0014; one more notification costs its commit nothing), conditional on the lease as `finishRun` is
 * (src/jobs/transitions.ts), whose transaction took six round trips for the same (BEGIN, the run,
 * the job, the webhook endpoints, the event, COMMIT).
 *
 * Only a plain ending takes this way: one with a diff to keep (a run that committed: it ran for
 * minutes, a round trip more or less is nothing to it) goes the transaction's way, as does one
 * whose project has an endpoint that wants the job's webhook, because the message is built from
 * the job row as the ending left it. The statement finds such an endpoint in the same snapshot in
 * which it would write, and then writes nothing: the caller takes the transaction's way.
 */
import { sql } from 'kysely';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Store } from '../store/database.ts';
import type { JobRunRow } from '../store/schema.ts';
import { storedChecks } from './job-checks.ts';
import type { RunOutcome } from './run-outcome.ts';

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

/**
 * The run's and the job's updates are those of `endRun` and `completeJob`/`failJob`
 * (transitions.ts): a failure keeps the job's link, branch and summary; a success replaces the
 * link and branch only when it has them. The event is appended only when the run ended.
 */
const endRunAndJob = compiledQuery<
  {
    runId: string;
    jobId: string;
    projectId: string;
    workerId: string;
    attempts: number;
    runStatus: 'succeeded' | 'failed';
    jobStatus: 'completed' | 'failed';
    at: string;
    summary: string | null;
    errorCode: string | null;
    errorMessage: string | null;
    changes: string | null;
    checks: string | null;
    prLink: string | null;
    branch: string | null;
    type: string;
    data: string;
  },
  { ended: boolean; subscribed: boolean }
>(
  [
    'runId',
    'jobId',
    'projectId',
    'workerId',
    'attempts',
    'runStatus',
    'jobStatus',
    'at',
    'summary',
    'errorCode',
    'errorMessage',
    'changes',
    'checks',
    'prLink',
    'branch',
    'type',
    'data',
  ],
  (db, p) =>
    sql<{ ended: boolean; subscribed: boolean }>`
      with endpoint as (
        select 1 from webhook_endpoints e
         where e.project_id = ${p.projectId} and e.disabled_at is null and e.events::jsonb ? ${p.type}
         limit 1
      ), ended as (
        update job_runs
           set status = ${p.runStatus}, ended_at = ${p.at}, lease_owner = null, lease_expires_at = null,
               summary = ${p.summary}, error_code = ${p.errorCode}, error_message = ${p.errorMessage}
         where id = ${p.runId} and lease_owner = ${p.workerId} and attempts = ${p.attempts}
           and status = 'running' and not exists (select 1 from endpoint)
        returning id,
          -- Followers of the job hear of its last event as this commits (src/store/signals.ts).
          pg_notify(left('docwright_' || current_schema(), 63),
                    json_build_object('kind', 'job-event', 'jobId', job_id)::text)
      ), changed as (
        update jobs j
           set status = ${p.jobStatus}, updated_at = ${p.at},
               changes = coalesce(${p.changes}, j.changes),
               checks = coalesce(${p.checks}, j.checks),
               pr_link = coalesce(${p.prLink}, j.pr_link),
               branch = coalesce(${p.branch}, j.branch),
               summary = case when ${p.jobStatus} = 'completed' then ${p.summary} else j.summary end,
               error_code = ${p.errorCode}, error_message = ${p.errorMessage}
         where j.id = ${p.jobId} and j.status = 'active' and exists (select 1 from ended)
      ), event as (
        insert into job_events (job_id, run_id, type, data, created_at)
        select ${p.jobId}, id, ${p.type}, ${p.data}, ${p.at} from ended
      )
      select exists (select 1 from ended) as ended, exists (select 1 from endpoint) as subscribed`.compile(
      db,
    ),
);
