/**
 * `commentOnSource` (docs/code-context.mdx): once a run has its outcome, each source
 * pull/merge request it documented gets a comment with the docs pull request's link, or with
 * the agent's reason when no documentation change was needed. A comment that fails is recorded
 * in the transcript and fails nothing: the docs work stands.
 */

import type { AgentChange } from '../agent/change.ts';
import type { CodeHost } from '../git/hosts/index.ts';

/** The longest reason quoted in a comment (a summary is the model's text). */
const MAX_REASON = 4_000;

export function sourceComment(outcome: {
  prLink: string | null;
  /** The docs branch the run pushed, when its host opens no pull request (a local repository). */
  branch: string | null;
  summary: string;
  jobId: string;
}): string {
  const reason = outcome.summary.slice(0, MAX_REASON);
  const text = outcome.prLink
    ? `The documentation for this change is proposed in ${outcome.prLink}.\n\n${reason}`
    : outcome.branch
      ? `The documentation for this change is on the branch \`${outcome.branch}\` of the docs repository.\n\n${reason}`
      : `No documentation change was needed for this change:\n\n${reason}`;
  return `${text}\n\n<sub>docwright job \`${outcome.jobId}\`</sub>`;
}

export async function commentOnSources(
  resolved: readonly AgentChange[],
  hostOf: (repository: string) => CodeHost | undefined,
  options: {
    prLink: string | null;
    branch: string | null;
    summary: string;
    jobId: string;
    record: (type: string, data?: unknown) => Promise<void>;
    redact: (text: string) => string;
    signal?: AbortSignal;
  },
): Promise<void> {
  const body = sourceComment(options);
  for (const change of resolved) {
    const { repository } = change;
    if (change.kind !== 'pull-request' || change.number === null) continue;
    const host = hostOf(repository);
    if (!host) continue;
    try {
      const comment = await host.commentOnChange(change.number, body, options.signal);
      await options.record('change.commented', { repository, number: change.number, url: comment.url });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      await options.record('change.comment_failed', {
        repository,
        number: change.number,
        message: options.redact(error instanceof Error ? error.message : String(error)),
      });
    }
  }
}
