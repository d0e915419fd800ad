/**
 * What the code-host doubles (github-api.ts, gitlab-api.ts, gitea-api.ts) share to speak a pull
 * request's conversation: the host's users with their permission on a repository, and each
 * repository's comments — plain ones, review comments on a file's line (GitHub), notes in a
 * discussion (GitLab). Each double renders them in its host's JSON; tests add comments here and
 * read docwright's replies.
 */

export interface DoubleUser {
  id: number;
  login: string;
}

export interface ThreadComment {
  id: number;
  /** The pull/merge request's number (GitLab: iid). */
  number: number;
  body: string;
  user: DoubleUser;
  createdAt: string;
  /** A review comment on a line (GitHub), or a diff note (GitLab). */
  review?: { path: string; line: number | null; diffHunk: string; inReplyTo: number | null };
  /** GitLab: the discussion the note is in. */
  discussionId?: string;
}

export class DoubleUsers {
  readonly #users = new Map<string, DoubleUser & { permission?: string }>();
  #nextId = 4_000;

  /** The user `login`, created when new; `permission` (the host's own word or access level) when given. */
  user(login: string, permission?: string): DoubleUser {
    const found = this.#users.get(login.toLowerCase());
    if (found) {
      if (permission !== undefined) found.permission = permission;
      return { id: found.id, login: found.login };
    }
    const created = { id: this.#nextId++, login, ...(permission !== undefined && { permission }) };
    this.#users.set(login.toLowerCase(), created);
    return { id: created.id, login };
  }

  byLogin(login: string) {
    return this.#users.get(login.toLowerCase());
  }

  byId(id: number) {
    return [...this.#users.values()].find((u) => u.id === id);
  }
}

export class Thread {
  readonly comments: ThreadComment[] = [];
  #nextId = 9_000;

  add(comment: Omit<ThreadComment, 'id' | 'createdAt'> & { createdAt?: string }): ThreadComment {
    const added = { id: this.#nextId++, createdAt: new Date().toISOString(), ...comment };
    this.comments.push(added);
    return added;
  }

  /** Comments of `number` created at or after `since` (when given), oldest first. */
  of(number: number, since?: string | null, filter: (c: ThreadComment) => boolean = () => true) {
    return this.comments.filter(
      (c) => c.number === number && (!since || c.createdAt >= new Date(since).toISOString()) && filter(c),
    );
  }

  /** docwright's replies (comments by `login`) on `number`. */
  by(login: string, number?: number): ThreadComment[] {
    return this.comments.filter(
      (c) => c.user.login === login && (number === undefined || c.number === number),
    );
  }
}
