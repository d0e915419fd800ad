/**
 * The Gitea double's pull request conversation (pull-conversations.ts): `GET /user`, a
 * collaborator's permission, a pull request's comments (`/issues/{n}/comments`: listed since a
 * time, created) in Gitea's shapes, and the `issue_comment` payload Gitea and Forgejo send.
 */
import type { HostAnswer, HostRequest } from './host-double.ts';
import type { DoubleUser, DoubleUsers, Thread, ThreadComment } from './pull-conversations.ts';

type Json = Record<string, unknown>;

export function giteaUserJson(origin: string, user: DoubleUser): Json {
  return {
    id: user.id,
    login: user.login,
    full_name: user.login,
    email: `${user.login}@noreply.example`,
    avatar_url: `${origin}/avatars/${user.login}`,
    username: user.login,
  };
}

const COMMENTS_PARAMS = new Set(['since', 'before', 'page', 'limit']);

export function giteaCommentEndpoints(context: {
  origin: string;
  owner: string;
  name: string;
  users: DoubleUsers;
  thread: Thread;
  hasPull: (number: number) => boolean;
}) {
  const { origin, users, thread } = context;
  const web = `${origin}/${context.owner}/${context.name}`;

  const commentJson = (c: ThreadComment) => ({
    id: c.id,
    html_url: `${web}/pulls/${c.number}#issuecomment-${c.id}`,
    pull_request_url: `${web}/pulls/${c.number}`,
    issue_url: '',
    user: giteaUserJson(origin, c.user),
    original_author: '',
    original_author_id: 0,
    body: c.body,
    assets: [],
    created_at: c.createdAt,
    updated_at: c.createdAt,
  });

  const notFound = (): HostAnswer => ({
    status: 404,
    body: { message: 'The target couldn\u2019t be found.', url: `${origin}/api/swagger` },
  });

  return {
    commentJson,
    answer(resource: string, request: HostRequest, login: string, violation: (m: string) => void) {
      const permission = /^\/collaborators\/([^/]+)\/permission$/.exec(resource);
      if (permission && request.method === 'GET') {
        const found = users.byLogin(decodeURIComponent(permission[1] ?? ''));
        if (!found?.permission) return notFound();
        return {
          status: 200,
          body: {
            permission: found.permission,
            role_name: found.permission,
            user: giteaUserJson(origin, found),
          },
        };
      }
      const comments = /^\/issues\/(\d+)\/comments$/.exec(resource);
      if (!comments) return undefined;
      const number = Number(comments[1]);
      if (!context.hasPull(number)) return notFound();
      if (request.method === 'GET') {
        for (const name of request.query.keys())
          if (!COMMENTS_PARAMS.has(name)) violation(`unknown query parameter ${name}`);
        return { status: 200, body: thread.of(number, request.query.get('since')).map(commentJson) };
      }
      if (request.method !== 'POST') return undefined;
      const body = (request.body ?? {}) as Json;
      if (typeof body.body !== 'string') return { status: 422, body: { message: 'body is required' } };
      return {
        status: 201,
        body: commentJson(thread.add({ number, body: body.body, user: users.user(login) })),
      };
    },

    /** The `issue_comment` (created) payload of `comment` on a pull request. */
    issueCommentPayload(comment: ThreadComment, repository: string, pullUrl: string): Json {
      return {
        action: 'created',
        issue: {
          id: comment.number + 500,
          number: comment.number,
          html_url: pullUrl,
          state: 'open',
          pull_request: { merged: false, html_url: pullUrl },
        },
        comment: commentJson(comment),
        repository: { full_name: `${context.owner}/${context.name}`, html_url: repository },
        sender: giteaUserJson(origin, comment.user),
        is_pull: true,
      };
    },
  };
}
