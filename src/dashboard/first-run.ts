/**
 * The dashboard's first-run page address, and the one-time link to it that `docwright serve`
 * prints when the embedded default starts with no operator account (operators/first-run-links.ts).
 */
import type { App } from '../app.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'firstRunLinks' | 'operators'>;

export const FIRST_RUN_PATH = '/setup';

/**
 * Prints the link, once, to the console (stderr, not the JSON log) when the embedded default
 * starts with no operator account; on PostgreSQL, how to create the first account (issue 35: it
 * said nothing).
 */
export async function announceFirstRun(app: AppUses, baseUrl: string): Promise<void> {
  if (app.config.databaseUrl) {
    // PostgreSQL: several processes may start; a one-time link from each would confuse. Say how.
    if ((await app.operators.list()).length > 0) return;
    process.stderr.write(
      `\n  docwright has no dashboard account yet. Create the first one with\n\n    docwright user create --email you@example.com --password-stdin\n\n  (with the same DATABASE_URL as this server), or start it with\n  DOCWRIGHT_ADMIN_EMAIL and DOCWRIGHT_ADMIN_PASSWORD. Then sign in at ${new URL('/login', app.config.publicUrl ?? baseUrl)}\n\n`,
    );
    return;
  }
  const token = await app.firstRunLinks.create();
  if (!token) return;
  const url = new URL(`${FIRST_RUN_PATH}?token=${token}`, app.config.publicUrl ?? baseUrl);
  process.stderr.write(
    `\n  docwright has no dashboard account yet. Open this one-time link to create yours:\n\n    ${url}\n\n  (It works once, for 24 hours; restart docwright for a new one, or run docwright user create.)\n\n`,
  );
}
