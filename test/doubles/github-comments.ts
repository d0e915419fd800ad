/**
 * The GitHub double's pull request conversation (pull-conversations.ts): `GET /user`, a
 * collaborator's permission, issue comments and review comments of a pull request (listed since
 * a time, created, replied to), in the shapes of GitHub's description (the double checks them
 * against it), and the webhook payloads GitHub sends for them.
 */
import type { HostAnswer, HostRequest } from './host-double.ts';
import type { DoubleUser, DoubleUsers, Thread, ThreadComment } from './pull-conversations.ts';

type Json = Record<string, unknown>;

export interface GitHubCommentContext {
  origin: string;
  /** `/api/v3` or ''. */
  prefix: string;
  owner: string;
  name: string;
  users: DoubleUsers;
  thread: Thread;
  hasPull: (number: number) => boolean;
}

export function gitHubUserJson(origin: string, prefix: string, user: DoubleUser): Json {
  // A bot's login (`app-1[bot]`) is escaped in its URLs, as GitHub's are.
  const path = encodeURIComponent(user.login);
  return {
    login: user.login,
    id: user.id,
    node_id: `U_${user.id}`,
    avatar_url: `${origin}/avatars/${path}`,
    url: `${origin}${prefix}/users/${path}`,
    html_url: `${origin}/${path}`,
    type: user.login.endsWith('[bot]') ? 'Bot' : 'User',
    site_admin: false,
  };
}

export function gitHubCommentEndpoints(context: GitHubCommentContext) {
  const { origin, prefix, owner, name, users, thread } = context;
  const api = `${origin}${prefix}/repos/${owner}/${name}`;
  const web = `${origin}/${owner}/${name}`;
  const userJson = (user: DoubleUser) => gitHubUserJson(origin, prefix, user);

  const issueCommentJson = (c: ThreadComment) => ({
    id: c.id,
    node_id: `IC_${c.id}`,
    url: `${api}/issues/comments/${c.id}`,
    html_url: `${web}/pull/${c.number}#issuecomment-${c.id}`,
    body: c.body,
    user: userJson(c.user),
    created_at: c.createdAt,
    updated_at: c.createdAt,
    issue_url: `${api}/issues/${c.number}`,
    author_association: 'MEMBER',
  });

  const reviewCommentJson = (c: ThreadComment) => ({
    url: `${api}/pulls/comments/${c.id}`,
    pull_request_review_id: c.id,
    id: c.id,
    node_id: `PRRC_${c.id}`,
    diff_hunk: c.review?.diffHunk ?? '',
    path: c.review?.path ?? '',
    commit_id: '0'.repeat(40),
    original_commit_id: '0'.repeat(40),
    user: userJson(c.user),
    body: c.body,
    created_at: c.createdAt,
    updated_at: c.createdAt,
    html_url: `${web}/pull/${c.number}#discussion_r${c.id}`,
    pull_request_url: `${api}/pulls/${c.number}`,
    author_association: 'MEMBER',
    ...(c.review?.inReplyTo ? { in_reply_to_id: c.review.inReplyTo } : {}),
    line: c.review?.line ?? null,
    original_line: c.review?.line ?? null,
    side: 'RIGHT',
  });

  const notFound = (): HostAnswer => ({
    status: 404,
    body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' },
  });

  return {
    issueCommentJson,
    reviewCommentJson,

    /** The answer to one of the conversation's operations, or undefined when `operationId` is another. */
    answer(operationId: string, params: Record<string, string>, request: HostRequest, login: string) {
      const number = Number(params.issue_number ?? params.pull_number);
      const body = (request.body ?? {}) as Json;
      const since = request.query.get('since');
      switch (operationId) {
        case 'repos/get-collaborator-permission-level': {
          const found = users.byLogin(params.username ?? '');
          if (!found?.permission) return notFound();
          const role = found.permission;
          const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : role;
          return { status: 200, body: { permission, role_name: role, user: userJson(found) } };
        }
        case 'issues/list-comments':
          if (!context.hasPull(number)) return notFound();
          return { status: 200, body: thread.of(number, since, (c) => !c.review).map(issueCommentJson) };
        case 'pulls/list-review-comments':
          if (!context.hasPull(number)) return notFound();
          return {
            status: 200,
            body: thread.of(number, since, (c) => Boolean(c.review)).map(reviewCommentJson),
          };
        case 'issues/create-comment': {
          if (!context.hasPull(number)) return notFound();
          const added = thread.add({ number, body: String(body.body), user: users.user(login) });
          return {
            status: 201,
            headers: { location: `${api}/issues/comments/${added.id}` },
            body: issueCommentJson(added),
          };
        }
        case 'pulls/create-reply-for-review-comment': {
          const parent = thread.comments.find(
            (c) => c.id === Number(params.comment_id) && c.number === number,
          );
          if (!parent?.review) return notFound();
          const added = thread.add({
            number,
            body: String(body.body),
            user: users.user(login),
            review: { ...parent.review, inReplyTo: parent.id },
          });
          return { status: 201, body: reviewCommentJson(added) };
        }
        default:
          return undefined;
      }
    },

    /** The `issue_comment` (created) webhook payload of `comment`. */
    issueCommentPayload(comment: ThreadComment, repository: string, pullUrl: string): Json {
      return {
        action: 'created',
        issue: {
          number: comment.number,
          html_url: pullUrl,
          state: 'open',
          pull_request: { url: `${api}/pulls/${comment.number}`, html_url: pullUrl },
        },
        comment: issueCommentJson(comment),
        repository: { full_name: `${owner}/${name}`, html_url: repository },
        sender: userJson(comment.user),
      };
    },

    /** The `pull_request_review_comment` (created) webhook payload of `comment`. */
    reviewCommentPayload(comment: ThreadComment, repository: string, pullUrl: string, headRef: string): Json {
      return {
        action: 'created',
        comment: reviewCommentJson(comment),
        pull_request: { number: comment.number, html_url: pullUrl, state: 'open', head: { ref: headRef } },
        repository: { full_name: `${owner}/${name}`, html_url: repository },
        sender: userJson(comment.user),
      };
    },
  };
}
