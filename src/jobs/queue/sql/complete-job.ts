import { compiledQuery } from '../../../store/compiled-query.ts';

/**
 * Moves an active job to `completed`: the run's pull request and branch replace the job's only
 * when the run has them (a run that changed nothing keeps an earlier run's link); so do an ask
 * run's answer and citations.
 */
export const completeJob = compiledQuery<{
  id: string;
  at: string;
  changes: string | null;
  checks: string | null;
  prLink: string | null;
  branch: string | null;
  summary: string | null;
  answer: string | null;
  citations: string | null;
}>(['id', 'at', 'changes', 'checks', 'prLink', 'branch', 'summary', 'answer', 'citations'], (db, p) =>
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
      answer: eb.fn.coalesce(eb.val(p.answer), eb.ref('answer')),
      citations: eb.fn.coalesce(eb.val(p.citations), eb.ref('citations')),
      error_code: null,
      error_message: null,
    }))
    .where('id', '=', p.id)
    .where('status', '=', 'active')
    .compile(),
);
