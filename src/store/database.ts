import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { type DialectName, pingDatabase } from './dialect.ts';
import { migrateToLatest } from './migrations.ts';
import type { Database } from './schema.ts';
import { NodeSqliteDialect } from './sqlite-dialect.ts';

/** An open database: the query builder plus what callers need to know about it. */
export interface Store {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Human-readable location (file path, or host/database/schema) — never a password. */
  location: string;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** `postgres://…`; absent = SQLite in `dataDir`. */
  databaseUrl?: string | undefined;
  /** PostgreSQL schema holding the tables (created when missing). */
  databaseSchema?: string;
  /** Directory for the SQLite file (`docwright.db`). */
  dataDir: string;
  /** Apply pending migrations while opening (default true). */
  migrate?: boolean;
  /** Most connections per process on PostgreSQL (default 10). */
  poolSize?: number;
  /** Called when an idle PostgreSQL connection dies; the pool replaces it. */
  onPoolError?: (error: Error) => void;
}

export async function openStore(options: StoreOptions): Promise<Store> {
  const store = options.databaseUrl
    ? openPostgres(options.databaseUrl, options)
    : openSqlite(options.dataDir);
  if (options.migrate !== false) {
    try {
      await migrateToLatest(store.db, store.dialect, options.databaseSchema ?? 'public');
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  return store;
}

function openSqlite(dataDir: string): Store {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'docwright.db');
  const db = new Kysely<Database>({ dialect: new NodeSqliteDialect(file) });
  return {
    db,
    dialect: 'sqlite',
    location: file,
    ping: () => pingDatabase(db),
    close: () => db.destroy(),
  };
}

function openPostgres(databaseUrl: string, options: StoreOptions): Store {
  const schema = options.databaseSchema ?? 'public';
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // A connection whose peer vanished without a reset would otherwise hang its
    // query for as long as TCP takes to notice (hours): fail it, as a 503.
    query_timeout: 30_000,
    keepAlive: true,
    // Unqualified names resolve in our schema; tests use one schema each.
    options: `-c search_path=${schema}`,
    application_name: 'docwright',
  });
  // A connection that dies emits 'error' on its client; with no listener that
  // is an uncaught exception. The pool listens for idle clients only, so every
  // client gets one of its own (the failed query still rejects, becoming a 503).
  pool.on('error', () => {}); // already reported by the client's listener below
  pool.on('connect', (client) => client.on('error', (error) => options.onPoolError?.(error)));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const url = new URL(databaseUrl);
  return {
    db,
    dialect: 'postgres',
    location: `${url.hostname}:${url.port || 5432}${url.pathname} (schema ${schema})`,
    ping: () => pingDatabase(db),
    close: () => db.destroy(),
  };
}
