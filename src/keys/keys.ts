import { timingSafeEqual } from 'node:crypto';
import { DocwrightError } from '../errors.ts';
import { newKeyId } from '../ids.ts';
import type { Store } from '../store/database.ts';
import type { ApiKeyRow } from '../store/schema.ts';

export type { ApiKeyRow };

import type { Signals } from '../store/signals.ts';
import { KeyCache, type VerifiedKey } from './key-cache.ts';
import { generateKey, hashKey, isWellFormedKey } from './key-format.ts';

/** An API key as listed: identified by prefix and last four characters, never the whole key. */
export interface ApiKeyView {
  id: string;
  projectId: string;
  name: string | null;
  /** `dwk_…abcd`: enough to recognise a key, useless to an attacker. */
  display: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** What a successful authentication knows about the caller. */
export interface Principal {
  keyId: string;
  projectId: string;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** How long a new key lasts unless its creator chose otherwise, on every surface (dashboard, CLI). */
export const DEFAULT_KEY_EXPIRY_DAYS = 90;

/** Whether a key that expires at `expiresAt` (ISO, or never) has expired at `at`. */
export function keyExpired(expiresAt: string | null, at: Date): boolean {
  return expiresAt !== null && expiresAt <= at.toISOString();
}

/**
 * Whether a use at `at` is already recorded by `lastUsedAt`. Writing on every request would make
 * reads contend for the write lock; a minute's resolution is plenty for "last used".
 */
export function keyUseRecorded(lastUsedAt: string | null, at: Date): boolean {
  return lastUsedAt !== null && Date.parse(lastUsedAt) >= at.getTime() - LAST_USED_RESOLUTION_MS;
}

export interface KeyService {
  /**
   * Creates a key; the returned `key` is the only time the full key exists outside the caller.
   * `expiresAt`: when it stops working; `null` never; left out, `DEFAULT_KEY_EXPIRY_DAYS` from now.
   */
  create(
    projectId: string,
    options?: { name?: string; expiresAt?: Date | null },
  ): Promise<ApiKeyView & { key: string }>;
  list(projectId: string): Promise<ApiKeyView[]>;
  /** Idempotent; returns the key as it now is. */
  revoke(keyId: string): Promise<ApiKeyView>;
  /**
   * Resolves a bearer key, or throws `unauthorized` with the reason. With `lookUp`, the key's row
   * comes from the caller's own query (one statement for the key and what the request reads,
   * current by construction) instead of the cache.
   */
  authenticate(key: string, lookUp?: (hash: string) => Promise<ApiKeyRow | undefined>): Promise<Principal>;
  /** Forgets every verified key of this process (keys were deleted); other processes hear `keys-changed`. */
  forgetVerified(): void;
}

export function createKeyService(deps: {
  store: Store;
  now?: () => Date;
  /** Revocations are announced to (and heard from) other processes through these. */
  signals?: Signals;
}): KeyService {
  const { db } = deps.store;
  const now = deps.now ?? (() => new Date());
  const cache = new KeyCache(deps.store, deps.signals);
  // Compiled once: the lookup runs on every request that misses the cache.
  const byHash = db.selectFrom('api_keys').selectAll().where('hash', '=', '').compile();

  const view = (row: ApiKeyRow): ApiKeyView => ({
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    display: `dwk_…${row.last_four}`,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  });

  const unauthorized = (why: string) => new DocwrightError('unauthorized', why);

  /** The key's row by hash. */
  async function lookUp(hash: string): Promise<ApiKeyRow | undefined> {
    return (await db.executeQuery<ApiKeyRow>({ ...byHash, parameters: [hash] })).rows[0];
  }

  /** What a request needs of the row found for `hash`, or `unauthorized`. */
  function verify(row: ApiKeyRow | undefined, hash: string): VerifiedKey {
    // The lookup is by hash; comparing again in constant time keeps the check
    // independent of how the database compares strings.
    if (!row || !timingSafeEqual(Buffer.from(row.hash), Buffer.from(hash))) {
      throw unauthorized('the API key is not valid');
    }
    if (row.revoked_at) throw unauthorized('the API key has been revoked');
    return {
      keyId: row.id,
      projectId: row.project_id,
      expiresAt: row.expires_at,
      lastUsedAt: row.last_used_at,
    };
  }

  /** Records the key's use, unless recorded within the resolution (`keyUseRecorded`). */
  async function touch(verified: VerifiedKey, at: Date): Promise<void> {
    if (keyUseRecorded(verified.lastUsedAt, at)) return;
    const lastUsedAt = at.toISOString();
    await db
      .updateTable('api_keys')
      .set({ last_used_at: lastUsedAt })
      .where('id', '=', verified.keyId)
      .execute();
    // Only once written: a database that refuses writes keeps answering 503, cached key or not.
    verified.lastUsedAt = lastUsedAt;
  }

  return {
    async create(projectId, options = {}) {
      const project = await db
        .selectFrom('projects')
        .select('id')
        .where('id', '=', projectId)
        .executeTakeFirst();
      if (!project) throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
      const key = generateKey();
      const at = now();
      const expiresAt =
        options.expiresAt === undefined
          ? new Date(at.getTime() + DEFAULT_KEY_EXPIRY_DAYS * 86_400_000)
          : options.expiresAt;
      const row: ApiKeyRow = {
        id: newKeyId(),
        project_id: projectId,
        name: options.name ?? null,
        hash: hashKey(key),
        last_four: key.slice(-4),
        created_at: at.toISOString(),
        expires_at: expiresAt?.toISOString() ?? null,
        revoked_at: null,
        last_used_at: null,
      };
      await db.insertInto('api_keys').values(row).execute();
      return { ...view(row), key };
    },

    async list(projectId) {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute();
      return rows.map(view);
    },

    async revoke(keyId) {
      await db
        .updateTable('api_keys')
        .set({ revoked_at: now().toISOString() })
        .where('id', '=', keyId)
        .where('revoked_at', 'is', null)
        .execute();
      cache.clear();
      await deps.signals?.publish({ kind: 'keys-changed' });
      const row = await db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
      if (!row) throw new DocwrightError('key-not-found', `key ${keyId} does not exist`);
      return view(row);
    },

    forgetVerified: () => cache.clear(),

    async authenticate(key, ownLookUp) {
      if (!isWellFormedKey(key)) throw unauthorized('the API key is malformed');
      const hash = hashKey(key);
      const at = now();
      let verified: VerifiedKey | undefined;
      if (ownLookUp) verified = verify(await ownLookUp(hash), hash);
      else {
        // A revocation empties the cache of every process before it can be trusted again (key-cache.ts).
        const state = cache.state();
        verified = cache.get(hash, state, at.getTime());
        if (verified && !(await cache.confirm(state))) verified = undefined;
        if (!verified) {
          verified = verify(await lookUp(hash), hash);
          cache.set(hash, verified, state, at.getTime());
        }
      }
      if (keyExpired(verified.expiresAt, at)) throw unauthorized('the API key has expired');
      await touch(verified, at);
      return { keyId: verified.keyId, projectId: verified.projectId };
    },
  };
}
