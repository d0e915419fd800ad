import { compiledQuery } from '../../../store/compiled-query.ts';
import { leaseHeld } from '../lease-rule.ts';

/** Ends a run the worker holds (the lease's owner and attempt), with its outcome. */
export const endRun = compiledQuery<{
  id: string;
  workerId: string;
  attempts: number;
  status: 'succeeded' | 'failed';
  at: string;
  summary: string | null;
  errorCode: string | null;
  errorMessage: string | null;
}>(['id', 'workerId', 'attempts', 'status', 'at', 'summary', 'errorCode', 'errorMessage'], (db, p) =>
  db
    .updateTable('job_runs')
    .set({
      status: p.status,
      ended_at: p.at,
      lease_owner: null,
      lease_expires_at: null,
      summary: p.summary,
      error_code: p.errorCode,
      error_message: p.errorMessage,
    })
    .where(leaseHeld({ runId: p.id, workerId: p.workerId, attempt: p.attempts }))
    .compile(),
);
