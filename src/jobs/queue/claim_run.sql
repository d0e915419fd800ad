-- claim_run: a worker's claim on PostgreSQL as one call (src/jobs/queue/claim.ts calls it; SQLite's
-- claim is sql/claim-run-sqlite.ts). The current definition: migration 0022 applies this file.
--
-- `FOR UPDATE … SKIP LOCKED` on the oldest queued run and its project, so that workers claim side
-- by side and claims of one project take turns; then the project's running runs are counted by a
-- statement of their own, after the locks are held (a function's statements each take a new
-- snapshot: READ COMMITTED, VOLATILE), so that the count sees every committed claim. A project
-- found full is skipped, for five passes at most: the worker's poll comes back. Answers the claimed
-- run and its job as JSON (read inside the function: the caller's snapshot could predate the job),
-- or no row. It records `run.started` but does not announce it: the caller does, after the commit
-- (a transaction that notifies serialises its commit with every other one that does).
--
-- Changing it: edit this file and add a migration that applies it again, as 0022 does
-- (src/store/migrations/function-files.ts); a fresh database and an upgraded one then end with the
-- same function. A change of its arguments or result type also drops the old one first.
create or replace function claim_run(
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
end $$;
