/**
 * First run of the embedded default: no operator can sign in yet, so `docwright serve` prints
 * a one-time link to a page where the first account is made. Only the link's hash is stored;
 * a new start replaces it, and it works once and only while no operator exists.
 */
import { createHash, randomBytes } from 'node:crypto';
import { processSecrets } from '../redact.ts';
import type { Store } from '../store/database.ts';

const LINK_TTL_MS = 24 * 60 * 60 * 1000;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A link taken by one request: it works for no other, unless given back. */
export interface FirstRunClaim {
  /** Puts the link back, when the account could not be made with it. */
  giveBack(): Promise<void>;
}

export type FirstRunLinks = ReturnType<typeof createFirstRunLinks>;

export function createFirstRunLinks(deps: { store: Store; now: () => Date }) {
  const { db } = deps.store;
  return {
    /** A new one-time link's token (earlier ones stop working), or undefined when an operator exists. */
    async create(): Promise<string | undefined> {
      const any = await db.selectFrom('operators').select('id').limit(1).executeTakeFirst();
      if (any) return undefined;
      const token = randomBytes(24).toString('base64url');
      // The link travels in a URL: keep it out of every log line (request logs print URLs).
      processSecrets.add(token);
      const at = deps.now();
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('sign_in_links').execute();
        await trx
          .insertInto('sign_in_links')
          .values({
            id: hashToken(token),
            created_at: at.toISOString(),
            expires_at: new Date(at.getTime() + LINK_TTL_MS).toISOString(),
          })
          .execute();
      });
      return token;
    },

    /** Whether `token` is a live first-run link (and no operator exists yet). */
    async valid(token: string): Promise<boolean> {
      if (!/^[A-Za-z0-9_-]{32}$/.test(token)) return false;
      const link = await db
        .selectFrom('sign_in_links')
        .select('expires_at')
        .where('id', '=', hashToken(token))
        .executeTakeFirst();
      if (!link || link.expires_at <= deps.now().toISOString()) return false;
      return !(await db.selectFrom('operators').select('id').limit(1).executeTakeFirst());
    },

    /**
     * Takes the link for one account, atomically: deleting its row is the claim, so of requests
     * racing with one token exactly one gets it, before any of them spends a password hash on it.
     * Undefined when the link is unknown, expired or taken.
     */
    async claim(token: string): Promise<FirstRunClaim | undefined> {
      const link = await db
        .deleteFrom('sign_in_links')
        .where('id', '=', hashToken(token))
        .where('expires_at', '>', deps.now().toISOString())
        .returningAll()
        .executeTakeFirst();
      if (!link) return undefined;
      return {
        giveBack: async () => {
          await db.insertInto('sign_in_links').values(link).execute();
        },
      };
    },
  };
}
