import type { Principal } from '../keys/keys.ts';
import { keyExpired, keyUseRecorded } from '../keys/keys.ts';
import type { ApiKeyRow } from '../store/schema.ts';
import type { Signal, Signals } from '../store/signals.ts';

/** How much the cache remembers at most; past either limit it forgets its oldest answers. */
const MAX_ENTRIES = 10_000;
const MAX_CHARS = 16 * 1024 * 1024;

interface Entry {
  principal: Principal;
  jobId: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  body: string;
}

/** What a poll captured when it arrived, before its lookup or read (see `JobPollCachePostgres`). */
export interface PollState {
  /** The listener's connection (`Signals.listeningSince`). */
  listening: number;
  /** How many announcements had been heard. */
  heard: number;
}

/**
 * Job polls answered from memory on PostgreSQL, as current as a read. The database announces
 * every change that could make an answer wrong (a job's row, a key's revocation, expiry or
 * deletion: triggers of migration 0014, whoever writes), and the announcements are heard through
 * the signals' LISTEN connection:
 * - an announcement forgets the answers it concerns (the job's, or all for a key);
 * - an answer read while any announcement arrived is not remembered (the change may have
 *   committed just after the read's snapshot, and its announcement would then find nothing to
 *   forget); so a remembered answer stays remembered only while no change to it has been heard;
 * - before answering from memory, the poll waits until the listener has heard everything
 *   committed before the poll arrived (`Signals.caughtUp`: one round trip on the listening
 *   connection, shared by the polls that arrive meanwhile): an answer still remembered then was
 *   current when the poll arrived.
 * While the listener is not connected nothing is remembered, and a reconnection forgets all.
 * A poll answered from memory costs no query and no connection of the pool.
 */
export class JobPollCachePostgres {
  readonly #signals: Signals;
  readonly #entries = new Map<string, Entry>();
  /** The entries of each job, so that a job's announcement finds them. */
  readonly #byJob = new Map<string, Set<string>>();
  #chars = 0;
  #heard = 0;
  #listening: number | undefined;

  constructor(signals: Signals) {
    this.#signals = signals;
    signals.subscribe((signal) => this.#hear(signal));
  }

  #hear(signal: Signal): void {
    if (signal.kind === 'job-changed') {
      this.#heard++;
      for (const id of this.#byJob.get(signal.jobId) ?? []) this.#forget(id);
    } else if (signal.kind === 'keys-changed' || signal.kind === 'jobs-changed') {
      this.#heard++;
      this.#clear();
    }
  }

  #clear(): void {
    this.#entries.clear();
    this.#byJob.clear();
    this.#chars = 0;
  }

  /** The state at a poll's arrival; undefined while nothing can be remembered (not listening). */
  token(): Promise<PollState | undefined> {
    return Promise.resolve(this.#state());
  }

  #state(): PollState | undefined {
    const listening = this.#signals.listeningSince?.();
    if (listening !== this.#listening) {
      this.#clear();
      this.#listening = listening;
    }
    return listening === undefined ? undefined : { listening, heard: this.#heard };
  }

  /**
   * The remembered answer for this key (by hash), project and job, once the listener has heard
   * everything committed before `state` was taken; undefined: read it. Not answered from memory
   * either when the key has expired or its use is due to be recorded (the full check does both).
   */
  async get(state: PollState | undefined, keyHash: string, projectId: string, jobId: string, at: Date) {
    if (state === undefined) return undefined;
    const id = entryKey(keyHash, projectId, jobId);
    const entry = this.#entries.get(id);
    if (!entry || keyExpired(entry.expiresAt, at) || !keyUseRecorded(entry.lastUsedAt, at)) return undefined;
    if (!(await this.#signals.caughtUp?.())) return undefined;
    // Still there once caught up: nothing committed before the poll arrived has changed it.
    if (this.#signals.listeningSince?.() !== state.listening) return undefined;
    return this.#entries.get(id) === entry ? entry : undefined;
  }

  /** Remembers an answer read after `state` was taken, unless an announcement was heard since. */
  set(state: PollState | undefined, keyHash: string, jobId: string, key: ApiKeyRow, body: string): void {
    if (state === undefined || state.heard !== this.#heard || body.length > MAX_CHARS) return;
    if (this.#signals.listeningSince?.() !== state.listening) return;
    const id = entryKey(keyHash, key.project_id, jobId);
    this.#forget(id);
    while (this.#entries.size >= MAX_ENTRIES || this.#chars + body.length > MAX_CHARS) {
      this.#forget(this.#entries.keys().next().value!);
    }
    this.#entries.set(id, {
      principal: { keyId: key.id, projectId: key.project_id },
      jobId,
      expiresAt: key.expires_at,
      lastUsedAt: key.last_used_at,
      body,
    });
    this.#chars += body.length;
    const ids = this.#byJob.get(jobId) ?? new Set<string>();
    this.#byJob.set(jobId, ids.add(id));
  }

  #forget(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    this.#chars -= entry.body.length;
    const ids = this.#byJob.get(entry.jobId);
    ids?.delete(id);
    if (ids?.size === 0) this.#byJob.delete(entry.jobId);
  }
}

const entryKey = (keyHash: string, projectId: string, jobId: string) => `${keyHash} ${projectId} ${jobId}`;
