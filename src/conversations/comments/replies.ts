/**
 * docwright's replies in a comment's thread (docs/pull-request-comments.mdx): "started" with the
 * job page once the follow-up is queued, then the outcome once its run ended — the new commit,
 * "no change needed" with the reason, or the failure's code and message (or why it could not
 * start). The state lives on the comment's row, so that a reply owed when a process stops is
 * posted by the next pass of any process; a lease keeps two processes from posting one reply
 * twice. Everything quoted from the job is redacted.
 */

import type { ReplyTarget } from '../../git/hosts/index.ts';
import type { Redact } from '../../redact.ts';
import { commitUrl, jobOutcome, jobPageUrl, type Outcome, startedOutcome } from '../job-outcome.ts';
import type { FollowUpRow, FollowUpStore } from './follow-up-store.ts';
import type { DocsHost } from './follow-ups.ts';

export interface ReplyDeps {
  store: FollowUpStore;
  hostFor: (projectId: string) => Promise<DocsHost | undefined>;
  publicUrl: string | undefined;
  /** The project's secrets and the process's, removed from everything quoted. */
  redactFor: (projectId: string) => Promise<Redact>;
  onError?: (row: FollowUpRow, message: string) => void;
}

type RunOf = Awaited<ReturnType<FollowUpStore['runOf']>>;

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

/** The outcome of the row's run, or null while it has not ended. */
function outcomeOf(
  row: FollowUpRow,
  run: RunOf,
  host: DocsHost,
  redact: Redact,
  pageUrl: string | null,
): Outcome | null {
  const job = { id: row.job_id, projectId: row.project_id };
  if (row.status === 'refused') {
    const error = { code: row.refusal_code ?? 'internal-error', message: row.refusal_message ?? '' };
    return jobOutcome(
      { ...job, status: 'failed', prLink: null, summary: null, error },
      { pageUrl, commit: null, redact },
    );
  }
  if (!run || !ENDED.has(run.status)) return null;
  const status = run.status === 'succeeded' ? 'completed' : run.status === 'failed' ? 'failed' : 'archived';
  const error = run.error_code ? { code: run.error_code, message: run.error_message ?? '' } : null;
  const commit =
    run.status === 'succeeded' && run.head_commit && Number(run.files ?? 0) > 0
      ? { sha: run.head_commit, url: commitUrl(host.kind, host.repository, run.head_commit) }
      : null;
  return jobOutcome(
    { ...job, status, prLink: null, summary: run.summary, error },
    { pageUrl, commit, redact },
  );
}

/** Posts the replies owed; returns how many were posted. */
export async function postReplies(deps: ReplyDeps, limit = 20): Promise<number> {
  let posted = 0;
  for (const row of await deps.store.withReplies(limit)) {
    const run = row.run_seq === null ? undefined : await deps.store.runOf(row.job_id, row.run_seq);
    const startedOwed = row.status === 'started' && row.started_replied_at === null;
    const ended = row.status === 'refused' || (run !== undefined && ENDED.has(run.status));
    if (!startedOwed && !ended) continue;
    if (!(await deps.store.lease(row.id))) continue;
    try {
      const host = await deps.hostFor(row.project_id);
      if (!host) throw new Error('the project’s host takes no comments');
      const target = JSON.parse(row.reply_to) as ReplyTarget;
      const pageUrl = jobPageUrl(deps.publicUrl, { id: row.job_id, projectId: row.project_id });
      if (startedOwed) {
        await host.conversation.reply(target, startedOutcome({ id: row.job_id }, pageUrl).text);
        await deps.store.replied(row.id, 'started');
        posted++;
      }
      const outcome = outcomeOf(row, run, host, await deps.redactFor(row.project_id), pageUrl);
      if (outcome) {
        // The started reply let its lease go (the run may have taken minutes): take it again.
        if (startedOwed && !(await deps.store.lease(row.id))) continue;
        await host.conversation.reply(target, outcome.text);
        await deps.store.replied(row.id, 'outcome');
        posted++;
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const clean = (await deps.redactFor(row.project_id).catch(() => (t: string) => t))(message);
      await deps.store.replyFailed(row.id, clean);
      deps.onError?.(row, clean);
    }
  }
  return posted;
}
