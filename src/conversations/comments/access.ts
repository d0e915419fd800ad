/**
 * Who may ask (docs/pull-request-comments.mdx): the host is asked who docwright's own account is
 * and whether a commenter may write to the docs repository, and the answers are remembered
 * briefly — a burst of comments (or a poll re-reading a thread) costs no request each, and a
 * revoked permission takes effect within `PERMISSION_TTL_MS`. A failed question is not remembered.
 */
import type { HostUser, PullRequestConversation } from '../../git/hosts/index.ts';

/** How long a commenter's write access is remembered. */
export const PERMISSION_TTL_MS = 5 * 60_000;
/** How long the credentials' own account is remembered (it changes only with the token). */
export const OWN_USER_TTL_MS = 60 * 60_000;
/** Answers remembered at most (the oldest are forgotten first). */
export const MAX_REMEMBERED = 1_000;

class TtlCache<T> {
  readonly #entries = new Map<string, { value: Promise<T>; until: number }>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #clock: () => number;
  constructor(ttlMs: number, max: number, clock: () => number) {
    this.#ttlMs = ttlMs;
    this.#max = max;
    this.#clock = clock;
  }

  get(key: string, ask: () => Promise<T>): Promise<T> {
    const now = this.#clock();
    const found = this.#entries.get(key);
    if (found && found.until > now) return found.value;
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    const value = ask();
    this.#entries.set(key, { value, until: now + this.#ttlMs });
    value.catch(() => this.#entries.delete(key));
    return value;
  }

  get size() {
    return this.#entries.size;
  }
}

export type CommentAccess = ReturnType<typeof createCommentAccess>;

export function createCommentAccess(options: { clock?: () => number } = {}) {
  const clock = options.clock ?? Date.now;
  const own = new TtlCache<HostUser>(OWN_USER_TTL_MS, MAX_REMEMBERED, clock);
  const writers = new TtlCache<boolean>(PERMISSION_TTL_MS, MAX_REMEMBERED, clock);
  return {
    /** Whether `author` is the credentials' own account (by id when both have one, else by login). */
    async isOwn(projectId: string, host: PullRequestConversation, author: HostUser): Promise<boolean> {
      const me = await own.get(projectId, () => host.whoAmI());
      if (me.id !== '' && author.id !== '') return me.id === author.id;
      return me.login.toLowerCase() === author.login.toLowerCase();
    },
    canWrite(projectId: string, host: PullRequestConversation, author: HostUser): Promise<boolean> {
      const key = `${projectId}\u0000${author.id}\u0000${author.login.toLowerCase()}`;
      return writers.get(key, () => host.canWrite(author));
    },
    /** Answers remembered now (tests). */
    get remembered() {
      return own.size + writers.size;
    },
  };
}
