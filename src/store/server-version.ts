import { sql } from 'kysely';
import type { Store } from './database.ts';

/** The database engine and its version, as `docwright doctor` reports it ("PostgreSQL 17.2", "SQLite 3.50.1"). */
export async function databaseServerVersion(store: Store): Promise<string> {
  if (store.dialect === 'postgres') {
    const { rows } = await sql<{ server_version: string }>`show server_version`.execute(store.db);
    return `PostgreSQL ${rows[0]?.server_version ?? ''}`.trim();
  }
  const { rows } = await sql<{ version: string }>`select sqlite_version() as version`.execute(store.db);
  return `SQLite ${rows[0]?.version ?? ''}`.trim();
}
