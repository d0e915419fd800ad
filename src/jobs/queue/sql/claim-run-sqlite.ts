import { sql } from 'kysely';
import { compiledQuery } from '../../../store/compiled-query.ts';
import type { JobRunRow } from '../../../store/schema.ts';

/**
 * SQLite's claim: the oldest queued run whose project has a free slot becomes `running` under
 * the worker's lease, as one UPDATE (the database's write lock makes it atomic). PostgreSQL's is
 * the `claim_run` function (../claim_run.sql).
 */
export const claimRunOnSqlite = compiledQuery<{
  workerId: string;
  leaseUntil: string;
  now: string;
  projectConcurrency: number;
}>(['workerId', 'leaseUntil', 'now', 'projectConcurrency'], (db, p) =>
  sql<JobRunRow>`
    update job_runs
       set status = 'running', attempts = attempts + 1,
           lease_owner = ${p.workerId}, lease_expires_at = ${p.leaseUntil},
           started_at = coalesce(started_at, ${p.now})
     where id = (
       select r.id from job_runs r
        where r.status = 'queued'
          and (select count(*) from job_runs x
                where x.project_id = r.project_id and x.status = 'running') < ${p.projectConcurrency}
        order by r.id
        limit 1)
    returning *`.compile(db),
);
