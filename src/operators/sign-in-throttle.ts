import type { Transaction } from 'kysely';
import type { Store } from '../store/database.ts';
import { lockNamed } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';

/** docs/dashboard.mdx: after 10 failed attempts for one e-mail, or from one address, within 15 minutes… */
export const THROTTLE_MAX_FAILURES = 10;
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;

export type ThrottleDecision =
  /** Go ahead and check the password; report the result with `succeeded` (a failure needs nothing). */
  | { allowed: true; attemptId: number }
  /** …further attempts get 429 with `Retry-After`, and no password hash is computed for them. */
  | { allowed: false; retryAfterSeconds: number };

export interface SignInThrottle {
  /** Records the attempt before the password is checked, or refuses it. */
  begin(email: string, address: string): Promise<ThrottleDecision>;
  /** The attempt signed in: it is no failure, and the e-mail's earlier failures are forgiven. */
  succeeded(attemptId: number, email: string): Promise<void>;
  /** The password could not be checked (the server was busy): the attempt counts for nothing. */
  abandon(attemptId: number): Promise<void>;
}

/**
 * Failure counting in the database, so that every API process sees the same attempts. An
 * attempt is recorded before its password is checked and deleted when it succeeds: attempts
 * still being checked count like failures, so that many simultaneous guesses cannot all get
 * past the count before any of them is recorded. Counting and recording happen under one lock,
 * so of many attempts at once exactly as many go ahead as the limit leaves room for.
 */
export function createSignInThrottle(deps: { store: Store; now: () => Date }): SignInThrottle {
  const { db, dialect } = deps.store;

  /** Seconds until fewer than the maximum attempts are within the window, or 0. */
  async function wait(
    trx: Transaction<Database>,
    column: 'email' | 'address',
    value: string,
    since: string,
    at: number,
  ): Promise<number> {
    const rows = await trx
      .selectFrom('sign_in_attempts')
      .select('attempted_at')
      .where(column, '=', value)
      .where('attempted_at', '>', since)
      .orderBy('attempted_at', 'desc')
      .offset(THROTTLE_MAX_FAILURES - 1)
      .limit(1)
      .execute();
    const oldest = rows[0];
    if (!oldest) return 0;
    return Math.max(1, Math.ceil((Date.parse(oldest.attempted_at) + THROTTLE_WINDOW_MS - at) / 1000));
  }

  return {
    async begin(email, address) {
      const at = deps.now();
      const since = new Date(at.getTime() - THROTTLE_WINDOW_MS).toISOString();
      // One short transaction per attempt, serialised across processes: count, then record.
      return db.transaction().execute(async (trx): Promise<ThrottleDecision> => {
        await lockNamed(dialect, trx, 'docwright:sign-in-attempts');
        // Expired attempts go as new ones come (through the same indexes the counts use).
        for (const [column, value] of [
          ['email', email],
          ['address', address],
        ] as const) {
          await trx
            .deleteFrom('sign_in_attempts')
            .where(column, '=', value)
            .where('attempted_at', '<=', since)
            .execute();
        }
        const retryAfterSeconds = Math.max(
          await wait(trx, 'email', email, since, at.getTime()),
          await wait(trx, 'address', address, since, at.getTime()),
        );
        // A refused attempt is not recorded: knocking does not extend the wait.
        if (retryAfterSeconds > 0) return { allowed: false, retryAfterSeconds };
        const inserted = await trx
          .insertInto('sign_in_attempts')
          .values({ email, address, attempted_at: at.toISOString() })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { allowed: true, attemptId: Number(inserted.id) };
      });
    },

    async abandon(attemptId) {
      await db.deleteFrom('sign_in_attempts').where('id', '=', attemptId).execute();
    },

    async succeeded(attemptId, email) {
      await db.deleteFrom('sign_in_attempts').where('email', '=', email).execute();
      await db.deleteFrom('sign_in_attempts').where('id', '=', attemptId).execute();
    },
  };
}
