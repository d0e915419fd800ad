import { sql } from 'kysely';
import { compiledQuery } from '../../../store/compiled-query.ts';
import { leaseHeld } from '../lease-rule.ts';

/**
 * PostgreSQL: ends a held run, moves its job out of `active`, appends the job's last event and
 * announces it, as one statement (../finish-postgres.ts says when). The run's and the job's
 * updates are those of `endRun` and `completeJob`/`failJob`: a failure keeps the job's link,
 * branch and summary; a success replaces the link and branch only when it has them. The event is
 * appended only when the run ended. Nothing is written when an endpoint wants the job's webhook.
 */
export const endRunAndJob = compiledQuery<
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
         where ${leaseHeld({ runId: p.runId, workerId: p.workerId, attempt: p.attempts })}
           and not exists (select 1 from endpoint)
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
