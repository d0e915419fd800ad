import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/database.ts';
import { type OperatorView, operatorView } from './operators.ts';

/**
 * Dashboard sign-in sessions (docs/dashboard.mdx). The token goes to the browser (a cookie) once;
 * the database keeps only its SHA-256, so a copy of the database signs nobody in.
 */

export const SESSION_TOKEN_PREFIX = 'dws_';
const tokenPattern = /^dws_[A-Za-z0-9_-]{43}$/;

/** Default lifetime of a session. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** A session unused for this long ends, whatever its lifetime (docs/dashboard.mdx: idle expiry 12 hours). */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** `last_seen_at` is written at most this often: a dashboard polls, and each write takes a lock. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

export interface SessionView {
  operatorId: string;
  /** Echoed by state-changing forms (CSRF protection). */
  csrfSecret: string;
  createdAt: string;
  expiresAt: string;
  lastSeenAt: string;
}

export interface ResolvedSession {
  session: SessionView;
  operator: OperatorView;
}

export interface SessionService {
  /** Starts a session; `token` is returned this once and stored only as a hash. */
  create(operatorId: string, options?: { ttlMs?: number }): Promise<{ token: string; session: SessionView }>;
  /** The live session of `token` and its operator; undefined when unknown, expired, idle too long, or the operator is disabled. */
  resolve(token: string): Promise<ResolvedSession | undefined>;
  /** Signs one session out (idempotent). */
  revoke(token: string): Promise<void>;
  /** Signs an operator out everywhere; returns how many sessions ended. */
  revokeAll(operatorId: string): Promise<number>;
}

export const hashSessionToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export function createSessionService(deps: { store: Store; now?: () => Date }): SessionService {
  const { db } = deps.store;
  const now = deps.now ?? (() => new Date());

  return {
    async create(operatorId, options = {}) {
      const token = `${SESSION_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
      const at = now();
      const row = {
        id: hashSessionToken(token),
        operator_id: operatorId,
        csrf_secret: randomBytes(32).toString('base64url'),
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + (options.ttlMs ?? SESSION_TTL_MS)).toISOString(),
        last_seen_at: at.toISOString(),
      };
      await db.transaction().execute(async (trx) => {
        // Sessions that ended by expiry are cleared as the operator signs in again.
        await trx
          .deleteFrom('sessions')
          .where('operator_id', '=', operatorId)
          .where('expires_at', '<=', row.created_at)
          .execute();
        await trx.insertInto('sessions').values(row).execute();
      });
      return {
        token,
        session: {
          operatorId,
          csrfSecret: row.csrf_secret,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
          lastSeenAt: row.last_seen_at,
        },
      };
    },

    async resolve(token) {
      if (!tokenPattern.test(token)) return undefined;
      const hash = hashSessionToken(token);
      const found = await db
        .selectFrom('sessions')
        .innerJoin('operators', 'operators.id', 'sessions.operator_id')
        .selectAll('operators')
        .select([
          'sessions.id as session_id',
          'sessions.csrf_secret',
          'sessions.expires_at',
          'sessions.last_seen_at',
          'sessions.created_at as session_created_at',
        ])
        .where('sessions.id', '=', hash)
        .executeTakeFirst();
      // Looked up by hash; compared again in constant time, whatever the database's collation.
      if (!found || !timingSafeEqual(Buffer.from(found.session_id), Buffer.from(hash))) return undefined;
      const at = now();
      if (found.expires_at <= at.toISOString() || found.disabled_at) return undefined;
      if (Date.parse(found.last_seen_at) + SESSION_IDLE_MS <= at.getTime()) return undefined;
      let lastSeenAt = found.last_seen_at;
      if (Date.parse(lastSeenAt) < at.getTime() - LAST_SEEN_RESOLUTION_MS) {
        lastSeenAt = at.toISOString();
        await db.updateTable('sessions').set({ last_seen_at: lastSeenAt }).where('id', '=', hash).execute();
      }
      const { session_id, csrf_secret, expires_at, last_seen_at, session_created_at, ...operator } = found;
      return {
        session: {
          operatorId: operator.id,
          csrfSecret: csrf_secret,
          createdAt: session_created_at,
          expiresAt: expires_at,
          lastSeenAt,
        },
        operator: operatorView(operator),
      };
    },

    async revoke(token) {
      await db.deleteFrom('sessions').where('id', '=', hashSessionToken(token)).execute();
    },

    async revokeAll(operatorId) {
      const result = await db.deleteFrom('sessions').where('operator_id', '=', operatorId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
