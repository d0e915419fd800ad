/**
 * Pull request comments that start follow-ups (docs/pull-request-comments.mdx). A comment counts
 * when it mentions `@docwright`, is on a pull request one of the project's jobs opened, is not
 * docwright's own, and its author may write to the docs repository (asked of the host, and
 * remembered briefly: access.ts). It is then claimed once (follow-up-store.ts) and becomes a
 * follow-up message on that job; a comment that arrives while the job runs waits, claimed, and
 * starts when the job ends. Replies are posted by the background loop (replies.ts).
 */
import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import type { HookHost } from '../../automations/code-events.ts';
import { isDocwrightError } from '../../errors.ts';
import type { PullRequestConversation } from '../../git/hosts/index.ts';
import { createHost, type HostOptions, hasConversation, sameRepository } from '../../git/hosts/index.ts';
import type { JobService } from '../../jobs/job-service.ts';
import type { Logger } from '../../logger.ts';
import type { ProjectService } from '../../projects/projects.ts';
import type { Database } from '../../store/schema.ts';
import { type CommentAccess, createCommentAccess } from './access.ts';
import type { CommentEvent } from './comment-events.ts';
import { commentInstruction } from './comment-prompt.ts';
import { commentKey, createFollowUpStore, type FollowUpRow, type FollowUpStore } from './follow-up-store.ts';
import { mentions } from './mention.ts';

/** A project's docs repository as the comments see it: its host and the conversation there. */
export interface DocsHost {
  kind: HookHost;
  repository: string;
  conversation: PullRequestConversation;
}

export interface CommentFollowUpsDeps {
  store: { db: Kysely<Database> };
  jobs: JobService;
  projects: ProjectService;
  logger: Logger;
  now: () => Date;
  config: {
    mention: string;
    promptMaxChars: number;
    publicUrl: string | undefined;
    allowLinkLocalRepositories: boolean;
  };
  /** How a project's host is reached (tests may give a double's; default: through its credentials). */
  hostFor?: (projectId: string) => Promise<DocsHost | undefined>;
  access?: CommentAccess;
}

/** How long a project's host client is kept (a changed token takes effect within this time), and how many. */
export const HOST_TTL_MS = 60_000;
const MAX_KEPT_HOSTS = 100;

/** Thrown inside the follow-up's transaction when another process started the comment first. */
class StartedElsewhere extends Error {}

export type CommentFollowUps = ReturnType<typeof createCommentFollowUps>;

const PULL_NUMBER = /\/(?:pull|pulls|merge_requests)\/(\d+)\/?$/;

export function createCommentFollowUps(deps: CommentFollowUpsDeps) {
  const { db } = deps.store;
  const store: FollowUpStore = createFollowUpStore(db, deps.now);
  const access = deps.access ?? createCommentAccess();
  const events = new EventEmitter();
  const changed = () => events.emit('changed');
  const hostOptions: HostOptions = { allowLinkLocal: deps.config.allowLinkLocalRepositories };

  /** Hosts kept briefly: a GitHub App's installation token is then minted once, not per comment. */
  const hosts = new Map<string, { host: Promise<DocsHost | undefined>; until: number }>();
  const throughCredentials = async (projectId: string): Promise<DocsHost | undefined> => {
    const project = await deps.projects.get(projectId);
    const host = createHost(project, await deps.projects.getSecrets(projectId), hostOptions);
    if (host.kind === 'local' || !hasConversation(host)) return undefined;
    return { kind: host.kind, repository: project.repository, conversation: host.conversation };
  };
  const hostFor =
    deps.hostFor ??
    ((projectId: string): Promise<DocsHost | undefined> => {
      const now = Date.now();
      const kept = hosts.get(projectId);
      if (kept && kept.until > now) return kept.host;
      if (hosts.size >= MAX_KEPT_HOSTS) hosts.delete(hosts.keys().next().value!);
      const host = throughCredentials(projectId);
      hosts.set(projectId, { host, until: now + HOST_TTL_MS });
      host.catch(() => hosts.delete(projectId));
      return host;
    });

  /** The job of the project that opened pull request `event.number` of the event's repository. */
  async function jobOfPull(projectId: string, event: CommentEvent) {
    const rows = await db
      .selectFrom('jobs')
      .select(['id', 'repository', 'pr_link', 'branch', 'status'])
      .where('project_id', '=', projectId)
      .where((eb) =>
        eb.or([
          eb('pr_link', 'like', `%/${event.number}`),
          ...(event.headRef ? [eb('branch', '=', event.headRef)] : []),
        ]),
      )
      .orderBy('created_at', 'desc')
      .limit(20)
      .execute();
    return rows.find((row) => {
      if (!sameRepository(row.repository, event.repositoryUrl)) return false;
      const number = row.pr_link ? PULL_NUMBER.exec(row.pr_link)?.[1] : undefined;
      // The pull request's number decides; its branch only for a job whose link is not known.
      if (number !== undefined) return number === String(event.number);
      return event.headRef !== null && row.branch === event.headRef;
    });
  }

  /** Queues the follow-up of a claimed comment, unless its job runs (it waits) or refuses it. */
  async function start(row: FollowUpRow): Promise<string> {
    try {
      await deps.jobs.message(row.project_id, row.job_id, { prompt: row.prompt }, undefined, {
        within: async (trx, seq) => {
          if (!(await store.markStarted(trx, row.id, seq))) throw new StartedElsewhere();
        },
      });
      changed();
      return 'follow-up started';
    } catch (error) {
      if (error instanceof StartedElsewhere) return 'follow-up started by another process';
      if (!isDocwrightError(error) || error.status >= 500) throw error;
      // The job runs, or the hour's uses are spent: the comment waits its turn.
      if (error.code === 'job-busy' || error.code === 'rate-limited') return `waiting: ${error.code}`;
      await store.markRefused(row.id, error.code, error.message);
      changed();
      return `refused: ${error.code}`;
    }
  }

  return {
    store,
    access,
    hostFor,
    /** Tells this process's reply loop that something may need a reply; returns the unsubscribe function. */
    onChange(listener: () => void): () => void {
      events.on('changed', listener);
      return () => events.off('changed', listener);
    },

    /** A comment from the hook or the poll: what became of it, for the delivery's record. */
    async receive(projectId: string, event: CommentEvent): Promise<string> {
      const { comment } = event;
      if (!mentions(comment.body, deps.config.mention)) return `ignored: no @${deps.config.mention} mention`;
      if (event.open === false) return 'ignored: the pull request is closed';
      const job = await jobOfPull(projectId, event);
      if (!job) return 'ignored: not a pull request docwright opened';
      const key = commentKey(event.host, event.repositoryUrl, comment.id);
      if (await store.isClaimed(key)) return 'ignored: the comment was received before';
      const prompt = commentInstruction(comment, {
        mention: deps.config.mention,
        number: event.number,
        maxChars: deps.config.promptMaxChars,
      });
      if (prompt === null) return 'ignored: the comment asks nothing';
      const host = await hostFor(projectId);
      if (!host) return 'ignored: the project’s host has no pull request comments';
      if (await access.isOwn(projectId, host.conversation, comment.author))
        return 'ignored: docwright’s own comment';
      if (!(await access.canWrite(projectId, host.conversation, comment.author))) {
        return `ignored: ${comment.author.login} may not write to the docs repository`;
      }
      const claimed = await store.claim({
        projectId,
        jobId: job.id,
        host: event.host,
        repository: event.repositoryUrl,
        number: event.number,
        commentId: comment.id,
        replyTo: comment.replyTo,
        author: comment.author.login,
        prompt,
      });
      if (!claimed) return 'ignored: the comment was received before';
      deps.logger.info({ projectId, jobId: job.id, comment: comment.id }, 'pull request comment claimed');
      return start(claimed);
    },

    /** Starts the comments that waited for their job to end; returns how many started. */
    async startWaiting(): Promise<number> {
      let started = 0;
      for (const row of await store.waiting()) {
        if ((await start(row)) === 'follow-up started') started++;
      }
      return started;
    },
  };
}
