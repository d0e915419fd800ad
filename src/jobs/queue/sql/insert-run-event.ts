import { sql } from 'kysely';
import { compiledQuery } from '../../../store/compiled-query.ts';
import { leaseHeld } from '../lease-rule.ts';

/** Appends a run's event, only while the lease of `workerId` on `attempt` holds. */
export const insertRunEvent = compiledQuery<{
  jobId: string;
  runId: string;
  type: string;
  data: string;
  at: string;
  workerId: string;
  attempt: number;
}>(['jobId', 'runId', 'type', 'data', 'at', 'workerId', 'attempt'], (db, p) =>
  sql`
    insert into job_events (job_id, run_id, type, data, created_at)
    select ${p.jobId}, ${p.runId}, ${p.type}, ${p.data}, ${p.at}
     where exists (select 1 from job_runs
                    where ${leaseHeld({ runId: p.runId, workerId: p.workerId, attempt: p.attempt })})`.compile(
    db,
  ),
);
