/**
 * Verified API keys, remembered so that a request need not look its key up — without making a
 * revocation any less immediate. An entry is trusted only while nothing can have revoked its key
 * unseen:
 * - this process's own revocations clear the cache at once;
 * - SQLite: another process's commit changes `PRAGMA data_version`, read on every request
 *   (one cheap statement, run at once without waiting for the connection); an entry verified
 *   under another version is stale;
 * - PostgreSQL: every revocation is announced with a `keys-changed` signal (NOTIFY), which
 *   empties the cache of every process; while a process's listener is not connected (signals
 *   could be missed) nothing is trusted, and what was known before a reconnection is forgotten.
 *   A notification reaches another process some time after the commit (13 ms were seen under
 *   load), so an entry is trusted for a request only once the listener has caught up with the
 *   request's arrival (`confirm`): then a cached answer is as current as a read there too.
 * Entries also expire after a minute, for revocations made outside docwright (SQL by hand).
 */
import type { Store } from '../store/database.ts';
import type { Signals } from '../store/signals.ts';

/** What a request needs to know about a verified key. */
export interface VerifiedKey {
  keyId: string;
  projectId: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

const MAX_ENTRIES = 10_000;
const ENTRY_TTL_MS = 60_000;

interface Entry {
  key: VerifiedKey;
  /** The state of the world the key was verified in (see `state`). */
  state: string;
  verifiedAt: number;
}

export class KeyCache {
  readonly #store: Store;
  readonly #signals: Signals | undefined;
  readonly #entries = new Map<string, Entry>();
  /** Bumped by every revocation this process hears of. */
  #generation = 0;

  constructor(store: Store, signals?: Signals) {
    this.#store = store;
    this.#signals = signals;
    signals?.subscribe((signal) => {
      if (signal.kind === 'keys-changed') this.clear();
    });
  }

  /** Forgets every key (a revocation in this process, or heard of). */
  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /**
   * A token for the current state of the world, or undefined when no entry can be trusted now:
   * entries made under another token are stale.
   */
  state(): string | undefined {
    if (this.#store.dialect === 'sqlite') {
      const version = this.#store.dataVersion?.();
      return version === undefined ? undefined : `${this.#generation}:${version}`;
    }
    const since = this.#signals?.listeningSince?.();
    return since === undefined ? undefined : `${this.#generation}:${since}`;
  }

  /**
   * Whether entries made under `state` may be trusted for a request that has arrived: SQLite's
   * `state` is read for the request itself; on PostgreSQL the listener must first show that
   * every revocation committed before now has reached this process (`Signals.caughtUp`), and
   * `state` must not have changed meanwhile. Then a cached answer is as current as a read.
   */
  async confirm(state: string | undefined): Promise<boolean> {
    if (state === undefined) return false;
    if (this.#store.dialect === 'sqlite') return true;
    return (await this.#signals?.caughtUp?.()) === true && this.state() === state;
  }

  /** The key verified under `state`, if still trusted. */
  get(hash: string, state: string | undefined, now: number): VerifiedKey | undefined {
    if (state === undefined) return undefined;
    const entry = this.#entries.get(hash);
    if (!entry) return undefined;
    if (entry.state !== state || now - entry.verifiedAt > ENTRY_TTL_MS) {
      this.#entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  /** Remembers a key verified under `state` (nothing when the state cannot be trusted). */
  set(hash: string, key: VerifiedKey, state: string | undefined, now: number): void {
    if (state === undefined) return;
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(hash, { key, state, verifiedAt: now });
  }
}
