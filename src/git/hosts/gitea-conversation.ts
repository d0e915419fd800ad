/**
 * Gitea's and Forgejo's side of a pull request conversation (conversation.ts): `GET /user`, a
 * collaborator's permission, a pull request's comments (`/issues/{n}/comments`: the pull
 * request's conversation) and replies there.
 */
import { webLink } from './change.ts';
import type { PullRequestConversation } from './conversation.ts';
import { userOf } from './conversation.ts';
import type { RepositoryApi } from './host-changes.ts';
import { eachPage, HttpFailure } from './http.ts';

/** Gitea's permissions that may write to a repository. */
const WRITERS = new Set(['write', 'admin', 'owner']);

interface GtComment {
  id: number;
  body?: string | null;
  user?: unknown;
  created_at?: string;
}

export function giteaConversation(api: Pick<RepositoryApi, 'request' | 'repoPath'>): PullRequestConversation {
  const { request, repoPath } = api;
  return {
    async whoAmI(signal) {
      const user = userOf((await request('GET', '/user', { signal })).body);
      if (!user) throw new Error('Gitea answered /user without a login');
      return user;
    },

    async canWrite(user, signal) {
      try {
        const { body } = await request<{ permission?: unknown }>(
          'GET',
          `${repoPath}/collaborators/${encodeURIComponent(user.login)}/permission`,
          { signal },
        );
        return WRITERS.has(String(body.permission));
      } catch (error) {
        if (error instanceof HttpFailure && (error.status === 404 || error.status === 403)) return false;
        throw error;
      }
    },

    async listComments(number, since, limit, signal) {
      const found: GtComment[] = [];
      await eachPage<GtComment>(request, `${repoPath}/issues/${number}/comments`, {
        query: { since },
        sizeParam: 'limit',
        perPage: Math.min(50, limit),
        maxPages: Math.ceil(limit / 50) + 1,
        signal,
        visit: (comment) => {
          if (typeof comment?.id === 'number' && (comment.created_at ?? '') >= since) found.push(comment);
          return found.length < limit;
        },
      });
      return found.flatMap((c) => {
        const author = userOf(c.user);
        if (!author) return [];
        return [
          {
            id: String(c.id),
            author,
            body: c.body ?? '',
            createdAt: c.created_at ?? null,
            replyTo: { kind: 'pull-request' as const, number },
            position: null,
          },
        ];
      });
    },

    async reply(target, text, signal) {
      const { body } = await request<{ id: number; html_url?: unknown }>(
        'POST',
        `${repoPath}/issues/${target.number}/comments`,
        {
          body: { body: text },
          signal,
        },
      );
      const created = body;
      return { id: created.id, url: webLink(created.html_url) };
    },
  };
}
