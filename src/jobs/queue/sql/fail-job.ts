import { compiledQuery } from '../../../store/compiled-query.ts';

/** Moves an active job to `failed`, with the run's error. */
export const failJob = compiledQuery<{
  id: string;
  at: string;
  changes: string | null;
  checks: string | null;
  errorCode: string;
  errorMessage: string;
}>(['id', 'at', 'changes', 'checks', 'errorCode', 'errorMessage'], (db, p) =>
  db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'failed',
      updated_at: p.at,
      changes: eb.fn.coalesce(eb.val(p.changes), eb.ref('changes')),
      checks: eb.fn.coalesce(eb.val(p.checks), eb.ref('checks')),
      error_code: p.errorCode,
      error_message: p.errorMessage,
    }))
    .where('id', '=', p.id)
    .where('status', '=', 'active')
    .compile(),
);
