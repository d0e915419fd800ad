/**
 * What a process of docwright holds for pull request comments (docs/pull-request-comments.mdx):
 * the follow-ups service (hook and poll arrivals), the replies it owes, and the poll; the
 * background loop (worker/comment-loop.ts) drives the last two.
 */
import type { Kysely } from 'kysely';
import type { HookHost } from '../../automations/code-events.ts';
import { HostError } from '../../git/hosts/index.ts';
import type { JobService } from '../../jobs/job-service.ts';
import type { Logger } from '../../logger.ts';
import type { ProjectService } from '../../projects/projects.ts';
import { createRedactor, processSecrets } from '../../redact.ts';
import type { Database } from '../../store/schema.ts';
import { readCommentDelivery } from './comment-events.ts';
import { pollComments } from './comment-poll.ts';
import { type CommentFollowUpsDeps, createCommentFollowUps } from './follow-ups.ts';
import { postReplies } from './replies.ts';

export type PullRequestComments = ReturnType<typeof createPullRequestComments>;

export function createPullRequestComments(
  deps: CommentFollowUpsDeps & {
    store: { db: Kysely<Database> };
    jobs: JobService;
    projects: ProjectService;
    logger: Logger;
    /** Whether the project's docs hook has a secret (docs/automations.mdx): then it is not polled. */
    hasDocsHook: (projectId: string) => Promise<boolean>;
  },
) {
  const followUps = createCommentFollowUps(deps);
  const redactFor = async (projectId: string) => {
    const secrets = await deps.projects.getSecrets(projectId);
    const own = createRedactor(Object.values(secrets).filter((v): v is string => typeof v === 'string'));
    return (text: string) => processSecrets.redact(own(text));
  };
  return {
    ...followUps,

    /** A verified delivery of the docs hook that carries a comment: what became of it. */
    async receiveDelivery(row: {
      project_id: string;
      host: string;
      event: string | null;
      body: string;
      content_type: string | null;
    }): Promise<string> {
      const reading = readCommentDelivery({
        host: row.host as HookHost,
        event: row.event,
        body: Buffer.from(row.body, 'base64'),
        contentType: row.content_type,
      });
      if (reading.kind === 'ignored') return `ignored: ${reading.reason}`;
      try {
        return await followUps.receive(row.project_id, reading.event);
      } catch (error) {
        // The host could not say who may ask (down, credentials refused): the delivery records
        // why, and the deliveries after it are processed (a throw would hold them all back).
        if (error instanceof HostError) return `failed: ${error.code}: ${error.message.slice(0, 300)}`;
        throw error;
      }
    },

    /** Posts the replies owed (started, outcomes); returns how many. */
    postReplies() {
      return postReplies({
        store: followUps.store,
        hostFor: followUps.hostFor,
        publicUrl: deps.config.publicUrl,
        redactFor,
        onError: (row, message) =>
          deps.logger.warn(
            { projectId: row.project_id, jobId: row.job_id, message },
            'could not reply to a pull request comment',
          ),
      });
    },

    /** One tick of the poll for projects without a docs hook. */
    poll(signal?: AbortSignal) {
      return pollComments(
        {
          db: deps.store.db,
          comments: followUps,
          hasDocsHook: deps.hasDocsHook,
          logger: deps.logger,
          now: deps.now,
        },
        signal,
      );
    },
  };
}
