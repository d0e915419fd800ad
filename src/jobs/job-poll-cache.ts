import type { Principal } from '../keys/keys.ts';
import { keyExpired, keyUseRecorded } from '../keys/keys.ts';
import type { Store } from '../store/database.ts';
import type { ApiKeyRow } from '../store/schema.ts';

/** How much a cache remembers at most; past either limit it forgets its oldest answers. */
export interface JobPollCacheLimits {
  /** Answers (default 10,000). */
  maxEntries: number;
  /** Characters of answers, all together (default 16 Mi: a job's summary has no length limit). */
  maxChars: number;
}

const DEFAULT_LIMITS: JobPollCacheLimits = { maxEntries: 10_000, maxChars: 16 * 1024 * 1024 };

interface Entry {
  principal: Principal;
  expiresAt: string | null;
  lastUsedAt: string | null;
  /** The job as answered, serialised. */
  body: string;
}

/**
 * Answers to job polls (GET job), remembered for as long as the database provably holds what
 * they were read from: the store's change token (`Store.changes`) is the same. That token moves
 * with every commit of another process and every write of this one (a revocation, a job's
 * progress, a key's recorded use), so an answer from here is as current as a read, revocations
 * included; it only saves the read. SQLite only: PostgreSQL has no such token short of a query;
 * there the database announces its changes instead (job-poll-cache-postgres.ts).
 *
 * All entries belong to one token: the first lookup under a new one forgets them.
 *
 * Reading the token costs a SQLite read transaction (two lock system calls and a stat: a third of
 * a poll's CPU time), so the polls of one turn of the event loop share one reading, taken in the
 * turn's check phase: after every one of them was received, so that each answer still reflects
 * the database as it was at some moment between its request's arrival and its answer.
 */
export class JobPollCache {
  readonly #store: Pick<Store, 'changes'>;
  readonly #limits: JobPollCacheLimits;
  readonly #entries = new Map<string, Entry>();
  #chars = 0;
  #token: string | undefined;
  /** The reading the polls of this turn wait for. */
  #reading: Promise<string | undefined> | undefined;

  constructor(store: Pick<Store, 'changes'>, limits: Partial<JobPollCacheLimits> = {}) {
    this.#store = store;
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /**
   * The current token, read after this call (in the check phase of this turn of the event loop,
   * once for every caller of the turn), before a lookup or a read whose answer may be remembered;
   * undefined: nothing can be remembered.
   */
  token(): Promise<string | undefined> {
    if (!this.#store.changes) return NO_TOKEN;
    this.#reading ??= new Promise((resolve) =>
      setImmediate(() => {
        this.#reading = undefined;
        resolve(this.#read());
      }),
    );
    return this.#reading;
  }

  #read(): string | undefined {
    const token = this.#store.changes?.();
    if (token !== this.#token) {
      this.#entries.clear();
      this.#chars = 0;
      this.#token = token;
    }
    return token;
  }

  /**
   * The remembered answer for this key (by hash), project and job under `token`, unless the key
   * has expired since or its use is due to be recorded again (the caller's full check does both).
   */
  get(token: string | undefined, keyHash: string, projectId: string, jobId: string, at: Date) {
    if (token === undefined || token !== this.#token) return undefined;
    const entry = this.#entries.get(entryKey(keyHash, projectId, jobId));
    if (!entry || keyExpired(entry.expiresAt, at) || !keyUseRecorded(entry.lastUsedAt, at)) return undefined;
    return entry;
  }

  /**
   * Remembers an answer read after `token` was taken, unless a later reading has replaced the
   * token. (The answer may be newer than its token, never older: a poll answered from it still
   * reflects a moment after its own reading.)
   */
  set(token: string | undefined, keyHash: string, jobId: string, key: ApiKeyRow, body: string): void {
    if (token === undefined || token !== this.#token || body.length > this.#limits.maxChars) return;
    const id = entryKey(keyHash, key.project_id, jobId);
    this.#forget(id);
    while (
      this.#entries.size >= this.#limits.maxEntries ||
      this.#chars + body.length > this.#limits.maxChars
    ) {
      this.#forget(this.#entries.keys().next().value!);
    }
    this.#entries.set(id, {
      principal: { keyId: key.id, projectId: key.project_id },
      expiresAt: key.expires_at,
      lastUsedAt: key.last_used_at,
      body,
    });
    this.#chars += body.length;
  }

  #forget(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    this.#chars -= entry.body.length;
  }
}

const NO_TOKEN = Promise.resolve(undefined);

const entryKey = (keyHash: string, projectId: string, jobId: string) => `${keyHash} ${projectId} ${jobId}`;
