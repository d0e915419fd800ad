/**
 * The dashboard's first-run page address, and the one-time link to it that `docwright serve`
 * prints when the embedded default starts with no operator account (operators/first-run-links.ts).
 */
import type { App } from '../app.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'firstRunLinks'>;

export const FIRST_RUN_PATH = '/setup';

/**
 * Prints the link, once, to the console (stderr, not the JSON log) when the embedded default
 * starts with no operator account.
 */
export async function announceFirstRun(app: AppUses, baseUrl: string): Promise<void> {
  if (app.config.databaseUrl) return;
  const token = await app.firstRunLinks.create();
  if (!token) return;
  const url = new URL(`${FIRST_RUN_PATH}?token=${token}`, app.config.publicUrl ?? baseUrl);
  process.stderr.write(
    `\n  docwright has no dashboard account yet. Open this one-time link to create yours:\n\n    ${url}\n\n  (It works once, for 24 hours; restart docwright for a new one, or run docwright user create.)\n\n`,
  );
}
