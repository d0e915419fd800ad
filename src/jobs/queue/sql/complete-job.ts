import { compiledQuery } from '../../../store/compiled-query.ts';

/**
 * Moves an active job to `completed`: the run's pull request and branch replace the job's only
 * when the run has them (a run that changed nothing keeps an earlier run's link).
 */
export const completeJob = compiledQuery<{
  id: string;
  at: string;
  changes: string | null;
  checks: string | null;
  prLink: string | null;
  branch: string | null;
  summary: string | null;
}>(['id', 'at', 'changes', 'checks', 'prLink', 'branch', 'summary'], (db, p) =>
  db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'completed',
      updated_at: p.at,
      changes: eb.fn.coalesce(eb.val(p.changes), eb.ref('changes')),
      checks: eb.fn.coalesce(eb.val(p.checks), eb.ref('checks')),
      pr_link: eb.fn.coalesce(eb.val(p.prLink), eb.ref('pr_link')),
      branch: eb.fn.coalesce(eb.val(p.branch), eb.ref('branch')),
      summary: p.summary,
      error_code: null,
      error_message: null,
    }))
    .where('id', '=', p.id)
    .where('status', '=', 'active')
    .compile(),
);
