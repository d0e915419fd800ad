import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectName } from '../dialect.ts';

/**
 * Migration 0016 (PostgreSQL only): `claim_run(…)` (migration 0015) answers the claimed run's job
 * beside the run, so that a worker starts a run without a round trip of its own to read the job.
 *
 * Read inside the function, not by a join around its call: the calling statement's snapshot is
 * taken before the function's own, so a join could miss the job of a run created in between (the
 * run would be claimed and its job not found). Both come back as JSON (`row_to_json`): every
 * column of both tables is text or integer, which JSON carries as the driver would.
 *
 * The claim itself is 0015's, unchanged: see there and src/jobs/queue/claim.ts.
 */
export function claimRunReturnsJobMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      // Another result type: the function is replaced, not redefined in place.
      await sql`drop function claim_run(text, text, text, integer)`.execute(db);
      await sql`
create function claim_run(
  arg_worker_id text, arg_now text, arg_lease_until text, arg_project_concurrency integer
) returns table (run json, job json)
language plpgsql volatile as $$
declare
  candidate record;
  full_projects text[] := '{}';
  running bigint;
  claimed job_runs%rowtype;
  claimed_job jobs%rowtype;
begin
  for pass in 1..5 loop
    select r.id, r.project_id into candidate
      from job_runs r join projects p on p.id = r.project_id
     where r.status = 'queued' and r.project_id <> all(full_projects)
     order by r.id
     limit 1
       for update of r, p skip locked;
    if not found then
      return;
    end if;
    select count(*) into running from job_runs x
     where x.project_id = candidate.project_id and x.status = 'running';
    if running >= arg_project_concurrency then
      full_projects := full_projects || candidate.project_id;
      continue;
    end if;
    update job_runs r
       set status = 'running', attempts = r.attempts + 1,
           lease_owner = arg_worker_id, lease_expires_at = arg_lease_until,
           started_at = coalesce(r.started_at, arg_now)
     where r.id = candidate.id
    returning r.* into claimed;
    insert into job_events (job_id, run_id, type, data, created_at)
    values (claimed.job_id, claimed.id, 'run.started',
            format('{"attempt":%s,"workerId":%s,"seq":%s}',
                   claimed.attempts, to_json(arg_worker_id)::text, claimed.seq),
            arg_now);
    select * into claimed_job from jobs j where j.id = claimed.job_id;
    return query select row_to_json(claimed), row_to_json(claimed_job);
    return;
  end loop;
end $$`.execute(db);
    },
  };
}
