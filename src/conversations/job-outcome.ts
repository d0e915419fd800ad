/**
 * A job's outcome in a few words for a conversation (docs/pull-request-comments.mdx): a reply in
 * a pull request's thread, and (Slack) a message kept up to date. One wording for every place
 * docwright talks: started (with the job page), the new commit, "no change needed" with the
 * agent's reason, or the failure's code and message. Everything that comes from the job (the
 * summary, the error) goes through the caller's redactor: a reply is public to whoever reads
 * the thread.
 */

/** What the wording reads of a job (a subset of the AgentJob, so that any surface can give it). */
export interface OutcomeJob {
  id: string;
  projectId: string;
  status: 'active' | 'completed' | 'failed' | 'archived';
  prLink: string | null;
  summary: string | null;
  error: { code: string; message: string } | null;
  /** Ask jobs (docs/pull-request-comments.mdx, "Questions"): the answer, when the job has one. */
  answer?: string | null;
}

export type OutcomeKind = 'started' | 'new-commit' | 'no-change' | 'failed' | 'cancelled' | 'answer';

export interface Outcome {
  kind: OutcomeKind;
  /** Markdown: what to post (GitHub, GitLab and Gitea render it; Slack's mrkdwn reads it well enough). */
  text: string;
}

/** The longest reason or message quoted from a job. */
export const MAX_QUOTED_CHARS = 3_000;

/** The dashboard's page of a job, when the public address is known (`DOCWRIGHT_PUBLIC_URL`). */
export function jobPageUrl(
  publicUrl: string | undefined,
  job: Pick<OutcomeJob, 'id' | 'projectId'>,
): string | null {
  if (!publicUrl) return null;
  return `${publicUrl.replace(/\/+$/, '')}/projects/${encodeURIComponent(job.projectId)}/jobs/${encodeURIComponent(job.id)}`;
}

const quote = (text: string, redact: (t: string) => string) => {
  const clean = redact(text).trim();
  const cut = clean.length <= MAX_QUOTED_CHARS ? clean : `${clean.slice(0, MAX_QUOTED_CHARS)}…`;
  return cut
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
};

const jobLink = (job: Pick<OutcomeJob, 'id'>, url: string | null) =>
  url ? `[${job.id}](${url})` : `\`${job.id}\``;

/** "Started", with the job page. */
export function startedOutcome(job: Pick<OutcomeJob, 'id'>, pageUrl: string | null): Outcome {
  return { kind: 'started', text: `On it: started follow-up job ${jobLink(job, pageUrl)}.` };
}

/**
 * The outcome of the job's last run. `commit`: the commit the run pushed, when it changed
 * files (its link when the host's web pages are known).
 */
export function jobOutcome(
  job: OutcomeJob,
  options: {
    pageUrl: string | null;
    commit: { sha: string; url: string | null } | null;
    redact: (text: string) => string;
  },
): Outcome {
  const link = jobLink(job, options.pageUrl);
  if (job.status === 'failed' || (job.status === 'archived' && job.error)) {
    const error = job.error ?? { code: 'internal-error', message: 'the job failed' };
    return {
      kind: 'failed',
      text: `The follow-up failed (\`${options.redact(error.code)}\`):\n\n${quote(error.message, options.redact)}\n\nJob: ${link}.`,
    };
  }
  if (job.status === 'archived')
    return { kind: 'cancelled', text: `The job was archived before it finished. Job: ${link}.` };
  // Ask jobs answer instead of changing anything: this is where the answer goes.
  if (job.answer) return { kind: 'answer', text: `${quote(job.answer, options.redact)}\n\nJob: ${link}.` };
  const summary = job.summary ? `\n\n${quote(job.summary, options.redact)}` : '';
  if (options.commit) {
    const sha = options.commit.sha.slice(0, 12);
    const commit = options.commit.url ? `[\`${sha}\`](${options.commit.url})` : `\`${sha}\``;
    return {
      kind: 'new-commit',
      text: `Done: pushed ${commit} to this pull request.${summary}\n\nJob: ${link}.`,
    };
  }
  return { kind: 'no-change', text: `No change needed.${summary}\n\nJob: ${link}.` };
}

/** A commit's web page on its host, from the repository's web URL (null for a local repository). */
export function commitUrl(host: string, repository: string, sha: string): string | null {
  if (!/^https?:\/\//.test(repository)) return null;
  const base = repository.replace(/\.git$/, '').replace(/\/+$/, '');
  if (host === 'github' || host === 'gitea') return `${base}/commit/${sha}`;
  if (host === 'gitlab') return `${base}/-/commit/${sha}`;
  return null;
}
