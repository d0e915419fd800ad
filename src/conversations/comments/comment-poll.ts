/**
 * The poll for pull request comments (docs/pull-request-comments.mdx), for projects whose docs
 * hook is not set up (no secret: no host can deliver to it): the comments of docwright's recent
 * pull requests are listed through the host's API since a cursor per pull request, and each is
 * received as a hook's would be — claimed by the same key, so that a comment found by poll and by
 * hook starts one follow-up. Bounded per tick: the pull requests polled longest ago first.
 */
import { type Kysely, sql } from 'kysely';
import type { Logger } from '../../logger.ts';
import type { Database } from '../../store/schema.ts';
import type { CommentFollowUps } from './follow-ups.ts';

/** Pull requests polled at most per tick, and comments read at most per pull request. */
export const MAX_PULLS_PER_TICK = 20;
export const MAX_COMMENTS_PER_PULL = 50;
/** Pull requests of jobs not updated for this long are no longer polled. */
export const POLL_WINDOW_MS = 14 * 24 * 3_600_000;

const PULL_NUMBER = /\/(?:pull|pulls|merge_requests)\/(\d+)\/?$/;

export interface CommentPollDeps {
  db: Kysely<Database>;
  comments: CommentFollowUps;
  /** Whether the project's docs hook has a secret (then the host delivers comments: no poll). */
  hasDocsHook: (projectId: string) => Promise<boolean>;
  logger: Logger;
  now: () => Date;
}

/** One tick; returns the comments received that started or queued a follow-up. */
export async function pollComments(deps: CommentPollDeps, signal?: AbortSignal): Promise<number> {
  const now = deps.now();
  const pulls = await deps.db
    .selectFrom('jobs as j')
    .leftJoin('comment_poll_cursors as c', 'c.job_id', 'j.id')
    .select(['j.id', 'j.project_id', 'j.pr_link', 'j.branch', 'j.repository', 'j.created_at', 'c.since'])
    .where('j.pr_link', 'is not', null)
    .where('j.status', '!=', 'archived')
    .where('j.updated_at', '>=', new Date(now.getTime() - POLL_WINDOW_MS).toISOString())
    // Never polled first, then the longest ago (PostgreSQL sorts nulls last, SQLite first).
    .orderBy(sql`coalesce(c.updated_at, '')`)
    .orderBy('j.id')
    .limit(MAX_PULLS_PER_TICK * 5)
    .execute();
  const hooked = new Map<string, boolean>();
  let received = 0;
  let polled = 0;
  for (const pull of pulls) {
    if (signal?.aborted || polled >= MAX_PULLS_PER_TICK) break;
    const number = Number(PULL_NUMBER.exec(pull.pr_link ?? '')?.[1]);
    if (!Number.isSafeInteger(number) || number <= 0) continue;
    if (!hooked.has(pull.project_id)) hooked.set(pull.project_id, await deps.hasDocsHook(pull.project_id));
    if (hooked.get(pull.project_id)) continue;
    polled++;
    try {
      received += await pollPull(deps, { ...pull, number, since: pull.since ?? pull.created_at }, signal);
    } catch (error) {
      deps.logger.warn(
        { projectId: pull.project_id, jobId: pull.id, err: { message: (error as Error).message } },
        'could not poll a pull request for comments',
      );
    }
  }
  return received;
}

async function pollPull(
  deps: CommentPollDeps,
  pull: {
    id: string;
    project_id: string;
    pr_link: string | null;
    branch: string | null;
    number: number;
    since: string;
  },
  signal?: AbortSignal,
): Promise<number> {
  const host = await deps.comments.hostFor(pull.project_id);
  const polledAt = deps.now().toISOString();
  let since = pull.since;
  let received = 0;
  if (host) {
    const comments = await host.conversation.listComments(
      pull.number,
      pull.since,
      MAX_COMMENTS_PER_PULL,
      signal,
    );
    for (const comment of comments) {
      const result = await deps.comments.receive(pull.project_id, {
        host: host.kind,
        repositoryUrl: host.repository,
        number: pull.number,
        pullUrl: pull.pr_link,
        headRef: pull.branch,
        open: null,
        comment,
      });
      if (!result.startsWith('ignored')) received++;
      // The next tick reads from the newest comment seen (it is read again, and known by its claim).
      if (comment.createdAt && comment.createdAt > since) since = comment.createdAt;
    }
  }
  await deps.db
    .insertInto('comment_poll_cursors')
    .values({ job_id: pull.id, project_id: pull.project_id, since, updated_at: polledAt })
    .onConflict((oc) => oc.column('job_id').doUpdateSet({ since, updated_at: polledAt }))
    .execute();
  return received;
}
