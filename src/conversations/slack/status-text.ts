/**
 * The one status message a job keeps in its Slack thread (docs/slack.mdx), in Slack's mrkdwn:
 * working, then the pull request link, "no change needed" and why, the answer to a question, or
 * the failure's code and message. Slack-formatted wording of the job's outcome; the pull request
 * comments use their own (src/conversations/comments/).
 */
import type { AgentJob } from '../../jobs/agent-job.ts';

/** Longest status message (Slack truncates messages past 40,000 characters; summaries are short). */
const MAX_STATUS_CHARS = 3_000;

/** The job as the status message reads it; an ask job's answer and citations included. */
export type StatusJob = Pick<AgentJob, 'id' | 'status' | 'prLink' | 'summary' | 'error'> &
  Partial<Pick<AgentJob, 'answer' | 'citations'>>;

/** Slack's escapes for text that is not markup: `&`, `<`, `>`. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A link in mrkdwn, or the plain label when there is no URL. */
function link(url: string | null, label: string): string {
  return url ? `<${url.replace(/[<>|]/g, encodeURIComponent)}|${escapeSlack(label)}>` : escapeSlack(label);
}

function bounded(text: string): string {
  return text.length <= MAX_STATUS_CHARS ? text : `${text.slice(0, MAX_STATUS_CHARS - 1)}…`;
}

/** The answer to a question, with its citations. */
function answerText(job: StatusJob): string {
  const citations = (job.citations ?? [])
    .slice(0, 10)
    .map((c) => `• \`${escapeSlack(c.path)}\` lines ${c.startLine}–${c.endLine}`);
  return [`:speech_balloon: ${escapeSlack(job.answer ?? '')}`, ...citations].join('\n');
}

/** The status message of `job`; `jobUrl` is its dashboard page when the public address is known. */
export function statusText(job: StatusJob, jobUrl: string | null): string {
  const jobLink = link(jobUrl, job.id);
  switch (job.status) {
    case 'active':
      return bounded(`:hourglass_flowing_sand: Working on it… (${jobLink})`);
    case 'completed':
      if (job.answer) return bounded(answerText(job));
      if (job.prLink) {
        const summary = job.summary ? `\n${escapeSlack(job.summary)}` : '';
        return bounded(`:white_check_mark: Pull request ready: ${link(job.prLink, job.prLink)}${summary}`);
      }
      return bounded(
        `:ok_hand: No change needed${job.summary ? `: ${escapeSlack(job.summary)}` : '.'} (${jobLink})`,
      );
    case 'failed': {
      const code = job.error?.code ?? 'internal-error';
      const message = job.error?.message ? `: ${escapeSlack(job.error.message)}` : '';
      return bounded(`:x: Failed (\`${code}\`)${message} (${jobLink})`);
    }
    case 'archived':
      return bounded(`:no_entry_sign: Cancelled: the job was archived (${jobLink}).`);
  }
}

/** The reply to a mention in a channel no project is linked to. */
export function howToLinkText(channelId: string): string {
  return [
    'This channel is not linked to a docwright project yet, so I cannot work here.',
    '• A Slack admin can link it from here: `/docwright link prj_…` (the project ID is on the project’s page)',
    `• or on the docwright server: \`docwright slack link --project prj_… --channel ${channelId}\``,
    '• or on the project’s settings page in the dashboard (Slack section).',
  ].join('\n');
}

/** The reply to a mention while the thread's job is still working. */
export const BUSY_TEXT =
  ':hourglass: I am still working on this thread’s last instruction. Mention me again once its status above says it is done.';

/** The reply to a mention that says nothing besides the mention. */
export const EMPTY_MENTION_TEXT =
  'Tell me what to change in the docs after the mention, e.g. “@docwright document the new --force flag”, or ask a question ending with “?”.';

/** Why a mention started nothing (rate limit, budget, archived job…), as a thread reply. */
export function refusedText(message: string): string {
  return `:warning: I could not start that: ${escapeSlack(message)}`;
}
