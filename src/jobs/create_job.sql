-- create_job: the locked part of creating a job on PostgreSQL as one call (src/jobs/create-postgres.ts
-- calls it and says why; SQLite's create is a transaction of src/jobs/job-service.ts). It queues
-- the job's first run, as src/jobs/queue/queue-run.ts does for a follow-up. The current
-- definition: migration 0022 applies this file; migration 0013 says what it does.
--
-- Changing it: edit this file and add a migration that applies it again, as 0022 does
-- (src/store/migrations/function-files.ts).
create or replace function create_job(
  arg_project_id text, arg_default_limit integer,
  arg_repository text, arg_ref text, arg_model text, arg_settings text,
  arg_at text, arg_window_start text,
  arg_job_id text, arg_job_ref text, arg_job_model text, arg_job_draft integer, arg_job_branch text,
  arg_run_id text, arg_prompt text, arg_event_data text,
  arg_message_id text, arg_message_body text, arg_endpoint_ids text[], arg_delivery_ids text[]
) returns table (outcome text, used bigint, oldest text, rate_limit integer)
language plpgsql volatile as $$
declare
  project projects%rowtype;
  stored bigint;
  expired bigint;
  oldest_use text;
  use_limit integer;
begin
  -- Serialises the project's creates (and follow-ups) across processes until the commit.
  select * into project from projects p where p.id = arg_project_id for update;
  if not found
     or project.repository <> arg_repository
     or project.ref <> arg_ref
     or project.model is distinct from arg_model
     or project.settings <> arg_settings
     -- The endpoints that want job.created, as the caller knew them (id order).
     or array(select e.id from webhook_endpoints e
               where e.project_id = arg_project_id and e.disabled_at is null
                 and e.events::jsonb ? 'job.created'
               order by e.id collate "C") <> arg_endpoint_ids then
    return query select 'stale'::text, 0::bigint, null::text, 0;
    return;
  end if;

  -- The window as readWindow counts it: stored uses (kept by triggers) less those that left it.
  select coalesce((select c.uses from rate_limit_counts c where c.project_id = arg_project_id), 0),
         (select count(*) from rate_limit_uses u
           where u.project_id = arg_project_id and u.used_at <= arg_window_start),
         (select min(u.used_at) from rate_limit_uses u
           where u.project_id = arg_project_id and u.used_at > arg_window_start)
    into stored, expired, oldest_use;
  use_limit := coalesce(project.rate_limit, arg_default_limit);
  if stored - expired >= use_limit then
    return query select 'rate-limited'::text, stored - expired, oldest_use, use_limit;
    return;
  end if;
  if expired > 0 then
    delete from rate_limit_uses u where u.project_id = arg_project_id and u.used_at <= arg_window_start;
  end if;
  insert into rate_limit_uses (project_id, used_at) values (arg_project_id, arg_at);

  insert into jobs (id, project_id, status, repository, ref, model, draft, branch,
                    created_at, updated_at, changes)
  values (arg_job_id, arg_project_id, 'active', project.repository, arg_job_ref, arg_job_model,
          arg_job_draft, arg_job_branch, arg_at, arg_at, '[]');
  insert into job_runs (id, job_id, project_id, seq, prompt, status, created_at)
  values (arg_run_id, arg_job_id, arg_project_id, 1, arg_prompt, 'queued', arg_at);
  insert into job_events (job_id, run_id, type, data, created_at)
  values (arg_job_id, arg_run_id, 'job.created', arg_event_data, arg_at);

  -- The webhook outbox (src/webhooks/enqueue.ts), in the job's transaction.
  if cardinality(arg_endpoint_ids) > 0 then
    insert into webhook_messages (id, project_id, job_id, type, body, created_at)
    values (arg_message_id, arg_project_id, arg_job_id, 'job.created', arg_message_body, arg_at);
    insert into webhook_deliveries (id, message_id, endpoint_id, project_id, status, next_attempt_at,
                                    created_at, updated_at)
    select d.id, arg_message_id, d.endpoint_id, arg_project_id, 'pending', arg_at, arg_at, arg_at
      from unnest(arg_delivery_ids, arg_endpoint_ids) as d(id, endpoint_id);
  end if;

  return query select 'created'::text, stored - expired, oldest_use, use_limit;
end $$;
