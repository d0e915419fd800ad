import { readFile } from 'node:fs/promises';
import { type Kysely, sql } from 'kysely';

/**
 * Runs the `.sql` file of a PostgreSQL function, named from src/ (`jobs/queue/claim_run.sql`):
 * the current definition of a function lives beside the code that calls it, as one
 * `create or replace function` a migration applies. The file is read where it lies in src/, or
 * in dist/ (the build copies every file that is not TypeScript).
 *
 * Released migrations that defined a function (0013, 0015, 0016) keep their own text: a database
 * that ran them stays as it was. A migration that applies a file (0022, and any later one after
 * the file changed) brings every database to the file's definition, so that a fresh database and
 * an upgraded one end with the same function.
 */
export async function applyFunctionFile(db: Kysely<unknown>, fromSrc: string): Promise<void> {
  const text = await readFile(new URL(`../../${fromSrc}`, import.meta.url), 'utf8');
  await sql.raw(text).execute(db);
}
