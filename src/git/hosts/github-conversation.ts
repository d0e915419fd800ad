/**
 * GitHub's side of a pull request conversation (conversation.ts): `GET /user`, a collaborator's
 * permission, the issue and review comments of a pull request, and replies (an issue comment, or
 * a reply in a review comment's thread).
 */
import { webLink } from './change.ts';
import type { PullRequestComment, PullRequestConversation } from './conversation.ts';
import { userOf } from './conversation.ts';
import type { RepositoryApi } from './host-changes.ts';
import { eachPage, HttpFailure } from './http.ts';

/** GitHub's permissions (and roles) that may write to a repository. */
const WRITERS = new Set(['admin', 'maintain', 'write']);

interface GhComment {
  id: number;
  body?: string | null;
  user?: unknown;
  created_at?: string;
  path?: string;
  line?: number | null;
  original_line?: number | null;
  diff_hunk?: string | null;
  in_reply_to_id?: number;
}

export function gitHubConversation(
  api: Pick<RepositoryApi, 'request' | 'repoPath'> & {
    /** Who the credentials are when `GET /user` cannot say (a GitHub App: github.ts). */
    whoAmI?: PullRequestConversation['whoAmI'];
  },
): PullRequestConversation {
  const { request, repoPath } = api;

  async function list(
    path: string,
    query: Record<string, string>,
    limit: number,
    signal?: AbortSignal,
  ): Promise<GhComment[]> {
    const since = query.since ?? '';
    const found: GhComment[] = [];
    await eachPage<GhComment>(request, path, {
      query,
      sizeParam: 'per_page',
      perPage: Math.min(100, limit),
      maxPages: Math.ceil(limit / 100) + 1,
      signal,
      visit: (comment) => {
        if (typeof comment?.id === 'number' && (comment.created_at ?? '') >= since) found.push(comment);
        return found.length < limit;
      },
    });
    return found;
  }

  return {
    async whoAmI(signal) {
      if (api.whoAmI) return api.whoAmI(signal);
      const { body } = await request('GET', '/user', { signal });
      const user = userOf(body);
      if (!user) throw new Error('GitHub answered /user without a login');
      return user;
    },

    async canWrite(user, signal) {
      try {
        const { body } = await request<{ permission?: unknown; role_name?: unknown }>(
          'GET',
          `${repoPath}/collaborators/${encodeURIComponent(user.login)}/permission`,
          { signal },
        );
        const answer = body;
        return WRITERS.has(String(answer.permission)) || WRITERS.has(String(answer.role_name));
      } catch (error) {
        // Not a collaborator (404), or a user this token may not ask about.
        if (error instanceof HttpFailure && (error.status === 404 || error.status === 403)) return false;
        throw error;
      }
    },

    async listComments(number, since, limit, signal) {
      // Issue comments come oldest first; review comments are asked to.
      const issue = await list(`${repoPath}/issues/${number}/comments`, { since }, limit, signal);
      const review = await list(
        `${repoPath}/pulls/${number}/comments`,
        { since, sort: 'created', direction: 'asc' },
        limit,
        signal,
      );
      const comments: PullRequestComment[] = [];
      for (const c of issue) {
        const author = userOf(c.user);
        if (author) {
          comments.push({
            id: String(c.id),
            author,
            body: c.body ?? '',
            createdAt: c.created_at ?? null,
            replyTo: { kind: 'pull-request', number },
            position: null,
          });
        }
      }
      for (const c of review) {
        const author = userOf(c.user);
        if (author) comments.push(reviewComment(number, c, author));
      }
      return comments.sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '')).slice(0, limit);
    },

    async reply(target, text, signal) {
      const path =
        target.kind === 'review-thread'
          ? `${repoPath}/pulls/${target.number}/comments/${encodeURIComponent(target.commentId)}/replies`
          : `${repoPath}/issues/${target.number}/comments`;
      const { body } = await request<{ id: number; html_url?: unknown }>('POST', path, {
        body: { body: text },
        signal,
      });
      const posted = body;
      return { id: posted.id, url: webLink(posted.html_url) };
    },
  };
}

/** A review comment as the poll reads it; a reply to a thread is answered in that thread. */
export function reviewComment(
  number: number,
  c: GhComment,
  author: { id: string; login: string },
): PullRequestComment {
  return {
    id: String(c.id),
    author,
    body: c.body ?? '',
    createdAt: c.created_at ?? null,
    replyTo: { kind: 'review-thread', number, commentId: String(c.in_reply_to_id ?? c.id) },
    position:
      typeof c.path === 'string'
        ? { path: c.path, line: c.line ?? c.original_line ?? null, diffHunk: c.diff_hunk ?? null }
        : null,
  };
}
