/**
 * Keeps each thread's status message in step with its job (docs/slack.mdx): the first pass after
 * a job is created posts the message in the thread, later ones edit it with `chat.update` when
 * the job changed. Durable: which threads are behind is in the database, so that a restart, or
 * another process, picks up where a pass stopped.
 */
import { toAgentJob } from '../../jobs/agent-job.ts';
import type { Logger } from '../../logger.ts';
import type { SlackWeb } from './slack-client.ts';
import { statusText } from './status-text.ts';
import type { SlackThreads } from './threads.ts';

export interface StatusUpdateDeps {
  threads: SlackThreads;
  web: SlackWeb;
  /** The dashboard page of a job, when the public address is known. */
  jobUrl: (projectId: string, jobId: string) => string | null;
  logger: Logger;
}

/** An error Slack answered (`ok: false`): trying again would get the same answer. */
const isSlackRefusal = (error: unknown) =>
  (error as { code?: string }).code === 'slack_webapi_platform_error';

/** Brings every status message that is behind up to date; returns how many were written. */
export async function updateStatuses(deps: StatusUpdateDeps): Promise<number> {
  let written = 0;
  for (const { thread, job } of await deps.threads.stale()) {
    if (!(await deps.threads.claimUpdate(thread, job.updated_at))) continue;
    const text = statusText(toAgentJob(job), deps.jobUrl(thread.project_id, job.id));
    if (text === thread.last_status && thread.status_ts !== null) continue;
    try {
      let ts = thread.status_ts;
      if (ts === null) {
        ts = await deps.web.postMessage({ channel: thread.channel_id, threadTs: thread.thread_ts, text });
      } else {
        await deps.web.update({ channel: thread.channel_id, ts, text });
      }
      await deps.threads.posted(thread.id, text, ts);
      written++;
    } catch (error) {
      const fields = {
        channel: thread.channel_id,
        jobId: job.id,
        err: { message: (error as Error).message },
      };
      if (isSlackRefusal(error)) {
        // not_in_channel, channel_not_found, message_not_found…: the next change of the job tries again.
        deps.logger.warn(fields, 'Slack refused the status message');
        continue;
      }
      // Slack unreachable (after the client's retries): the next pass tries again.
      await deps.threads.unclaim(thread.id, thread.seen_job_update);
      deps.logger.warn(fields, 'status message not written; will try again');
      return written;
    }
  }
  return written;
}
