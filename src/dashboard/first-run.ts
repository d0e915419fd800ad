import { createHash, randomBytes } from 'node:crypto';
import type { App } from '../app.ts';
import { processSecrets } from '../redact.ts';

/**
 * First run of the embedded default: no operator can sign in yet, so `docwright serve` prints
 * a one-time link to a page where the first account is made. Only the link's hash is stored;
 * a new start replaces it, and it works once and only while no operator exists.
 */
export const FIRST_RUN_PATH = '/setup';
const LINK_TTL_MS = 24 * 60 * 60 * 1000;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A new one-time link's token (earlier ones stop working), or undefined when an operator exists. */
export async function createFirstRunToken(app: App): Promise<string | undefined> {
  const { db } = app.store;
  const any = await db.selectFrom('operators').select('id').limit(1).executeTakeFirst();
  if (any) return undefined;
  const token = randomBytes(24).toString('base64url');
  // The link travels in a URL: keep it out of every log line (request logs print URLs).
  processSecrets.add(token);
  const at = app.now();
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
}

/** Whether `token` is a live first-run link (and no operator exists yet). */
export async function firstRunTokenValid(app: App, token: string): Promise<boolean> {
  const { db } = app.store;
  if (!/^[A-Za-z0-9_-]{32}$/.test(token)) return false;
  const link = await db
    .selectFrom('sign_in_links')
    .select('expires_at')
    .where('id', '=', hashToken(token))
    .executeTakeFirst();
  if (!link || link.expires_at <= app.now().toISOString()) return false;
  return !(await db.selectFrom('operators').select('id').limit(1).executeTakeFirst());
}

/** A link taken by one request: it works for no other, unless given back. */
export interface FirstRunClaim {
  /** Puts the link back, when the account could not be made with it. */
  giveBack(): Promise<void>;
}

/**
 * Takes the link for one account, atomically: deleting its row is the claim, so of requests
 * racing with one token exactly one gets it, before any of them spends a password hash on it.
 * Undefined when the link is unknown, expired or taken.
 */
export async function claimFirstRunToken(app: App, token: string): Promise<FirstRunClaim | undefined> {
  const { db } = app.store;
  const link = await db
    .deleteFrom('sign_in_links')
    .where('id', '=', hashToken(token))
    .where('expires_at', '>', app.now().toISOString())
    .returningAll()
    .executeTakeFirst();
  if (!link) return undefined;
  return {
    giveBack: async () => {
      await db.insertInto('sign_in_links').values(link).execute();
    },
  };
}

/**
 * Prints the link, once, to the console (stderr, not the JSON log) when the embedded default
 * starts with no operator account.
 */
export async function announceFirstRun(app: App, baseUrl: string): Promise<void> {
  if (app.config.databaseUrl) return;
  const token = await createFirstRunToken(app);
  if (!token) return;
  const url = new URL(`${FIRST_RUN_PATH}?token=${token}`, app.config.publicUrl ?? baseUrl);
  process.stderr.write(
    `\n  docwright has no dashboard account yet. Open this one-time link to create yours:\n\n    ${url}\n\n  (It works once, for 24 hours; restart docwright for a new one, or run docwright user create.)\n\n`,
  );
}
