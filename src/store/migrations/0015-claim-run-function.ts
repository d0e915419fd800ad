import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectName } from '../dialect.ts';

/**
 * Migration 0015 (PostgreSQL only; nothing on SQLite, where a transaction costs no round trips):
 * `claim_run(…)`, a worker's claim as one call, so that a claim costs one round trip instead of
 * six (BEGIN, the candidate's locks, the project's running count, the update, the `run.started`
 * event, COMMIT), and a claim that finds nothing one instead of three.
 *
 * The protocol is the one src/jobs/queue/claim.ts describes: `FOR UPDATE … SKIP LOCKED` on the oldest
 * queued run and its project, so that workers claim side by side and claims of one project take
 * turns; then the project's running runs are counted by a statement of their own, after the locks
 * are held (a function's statements each take a new snapshot: READ COMMITTED, VOLATILE), so that
 * the count sees every committed claim. A project found full is skipped, for five passes at most:
 * the worker's poll comes back.
 *
 * Called in autocommit: the call is its transaction. Answers the claimed `job_runs` row, or no
 * row. The `run.started` event's data is the JSON the worker wrote before: attempt, worker, seq.
 * It does not announce the event: PostgreSQL serialises the commits of transactions that write and
 * notify, flush and all (see migration 0013), which held the worker to about one claim per flush.
 * The caller announces it after the commit, in a transaction that writes nothing.
 * A change to what the function does is a new migration that replaces it.
 */
export function claimRunFunctionMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      await sql`
create function claim_run(
  arg_worker_id text, arg_now text, arg_lease_until text, arg_project_concurrency integer
) returns setof job_runs
language plpgsql volatile as $$
declare
  candidate record;
  full_projects text[] := '{}';
  running bigint;
  claimed job_runs%rowtype;
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
    return next claimed;
    return;
  end loop;
end $$`.execute(db);
    },
  };
}
