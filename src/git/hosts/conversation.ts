/**
 * What docwright needs of a code host to hold a conversation on a pull request
 * (docs/pull-request-comments.mdx): who its own account is, whether a commenter may write to the
 * repository, the comments of a pull request (the poll), and replies in a comment's thread. One
 * implementation per host (`github-conversation.ts`, `gitlab-conversation.ts`,
 * `gitea-conversation.ts`), built on the host's own API client, so that its credential, address
 * and redirect guards apply.
 */
import type { ChangeComment } from './change.ts';

/** A user of the host: its numeric id (as text) and its login. */
export interface HostUser {
  id: string;
  login: string;
}

/** Where a reply goes: the pull request's conversation, a review comment's thread, a GitLab discussion. */
export type ReplyTarget =
  | { kind: 'pull-request'; number: number }
  | { kind: 'review-thread'; number: number; commentId: string }
  | { kind: 'discussion'; number: number; discussionId: string };

/** A comment on a pull request, as the host lists it (the poll) or a webhook sends it. */
export interface PullRequestComment {
  id: string;
  author: HostUser;
  body: string;
  /** ISO 8601. */
  createdAt: string | null;
  replyTo: ReplyTarget;
  /** A review comment on a file: its path, line (null: the file, or an outdated line) and hunk. */
  position: { path: string; line: number | null; diffHunk: string | null } | null;
}

export interface PullRequestConversation {
  /** The account the credentials act as. */
  whoAmI(signal?: AbortSignal): Promise<HostUser>;
  /** Whether `user` may write to the repository (GitHub write/maintain/admin, GitLab Developer+, Gitea write/admin/owner). */
  canWrite(user: HostUser, signal?: AbortSignal): Promise<boolean>;
  /** Comments of pull request `number` created at or after `since` (ISO 8601), oldest first, at most `limit`. */
  listComments(
    number: number,
    since: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<PullRequestComment[]>;
  /** Posts `body` where `target` says. */
  reply(target: ReplyTarget, body: string, signal?: AbortSignal): Promise<ChangeComment>;
}

/** Whether a host holds conversations (a local repository does not). */
export const hasConversation = <T extends object>(
  host: T,
): host is T & { conversation: PullRequestConversation } => 'conversation' in host;

/** A user from a host's JSON (`login` on GitHub and Gitea, `username` on GitLab), or null. */
export function userOf(value: unknown): HostUser | null {
  if (typeof value !== 'object' || value === null) return null;
  const user = value as { id?: unknown; login?: unknown; username?: unknown };
  const login = typeof user.login === 'string' ? user.login : user.username;
  if (typeof login !== 'string' || login === '' || login.length > 255) return null;
  const id = typeof user.id === 'number' || typeof user.id === 'string' ? String(user.id) : '';
  return { id, login };
}
