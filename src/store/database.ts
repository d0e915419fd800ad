import { hash } from 'node:crypto';
import { accessSync, chmodSync, closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import { type CompiledQuery, Kysely } from 'kysely';
import pg from 'pg';
import { DocwrightError } from '../errors.ts';
import { type DialectName, pingDatabase, probeWritable } from './dialect.ts';
import { migrateToLatest } from './migrations.ts';
import { SchemaPostgresDialect } from './postgres-introspector.ts';
import type { Database } from './schema.ts';
import { NodeSqliteDialect, type NodeSqliteOptions } from './sqlite-dialect.ts';

/** An open database: the query builder plus what callers need to know about it. */
export interface Store {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Human-readable location (file path, or host/database/schema) — never a password. */
  location: string;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Resolves when the database would accept a write (it changes nothing); for readiness. */
  checkWritable(): Promise<void>;
  /**
   * SQLite: `PRAGMA data_version`, a number that changes whenever another connection (another
   * process) committed since this one last asked, and never for this connection's own commits;
   * undefined when it cannot be told. Absent on PostgreSQL.
   */
  dataVersion?(): number | undefined;
  /**
   * SQLite: a token that stays the same exactly as long as nothing can have changed what the
   * database holds: no other connection committed (`dataVersion`) and this process ran no
   * statement that may write. Undefined when it cannot be told; absent on PostgreSQL, which has
   * no such check short of a query.
   */
  changes?(): string | undefined;
  /**
   * Runs a compiled read and returns its rows. Same result as `db.executeQuery`; on SQLite it
   * runs at once when the connection is free, skipping the executor (the API's hot reads).
   */
  read<R>(query: CompiledQuery<R>): Promise<R[]>;
  /**
   * PostgreSQL: runs one statement (a write too) as a named prepared statement on a connection of
   * the pool, in its own transaction, and returns its rows: one round trip. Absent on SQLite.
   */
  prepared?<R>(query: CompiledQuery): Promise<R[]>;
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
  /** Tuning of the SQLite connection (defaults suit every deployment; tests change them). */
  sqlite?: NodeSqliteOptions;
}

export async function openStore(options: StoreOptions): Promise<Store> {
  const store = options.databaseUrl
    ? openPostgres(options.databaseUrl, options)
    : openSqlite(options.dataDir, options.sqlite);
  if (options.migrate !== false) {
    try {
      await migrateToLatest(store.db, store.dialect, options.databaseSchema ?? 'public', store.location);
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  return store;
}

function openSqlite(dataDir: string, options: NodeSqliteOptions = {}): Store {
  const file = prepareDataDir(dataDir);
  const dialect = new NodeSqliteDialect(file, options);
  const db = new Kysely<Database>({ dialect });
  return {
    db,
    dialect: 'sqlite',
    location: file,
    ping: () => pingDatabase(db),
    checkWritable: writableCheck(
      'sqlite',
      db,
      file,
      'make the file and its directory writable by this user (a database that was read-only when docwright started needs a restart too)',
    ),
    dataVersion: () => dialect.dataVersion(),
    changes: () => dialect.changes(),
    read: async <R>(query: CompiledQuery<R>) =>
      dialect.readNow<R>(query) ?? (await db.executeQuery<R>(query)).rows,
    close: () => db.destroy(),
  };
}

/** What the data directory holds that nobody else should read: transcripts, key hashes, the secret key. */
const PRIVATE_FILES = ['docwright.db', 'docwright.db-wal', 'docwright.db-shm', 'secret.key'];

/**
 * Creates the data directory (0700) and the database file (0600) when missing, so that SQLite's
 * journal files, which take the database file's mode, are private too; narrows the mode of files
 * an earlier version created 0644. A directory docwright cannot write stops the start with a
 * message that says which and what to do. A database *file* that cannot be written does not: the
 * server starts, reports not ready and answers 503, so that what it holds can still be read.
 */
function prepareDataDir(dataDir: string): string {
  const file = path.join(dataDir, 'docwright.db');
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw unwritableDataDir(dataDir, error);
  }
  try {
    closeSync(openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw unwritableDataDir(dataDir, error);
  }
  for (const name of PRIVATE_FILES) {
    const existing = path.join(dataDir, name);
    try {
      if ((statSync(existing).mode & 0o077) !== 0) chmodSync(existing, 0o600);
    } catch {
      // Absent, or not ours to change (an immutable file is reported by the readiness check).
    }
  }
  return file;
}

/** The readiness check of a store: a refused write says which database, why, and what to do. */
function writableCheck(
  dialect: DialectName,
  db: Kysely<Database>,
  location: string,
  remedy: string,
): () => Promise<void> {
  return () =>
    probeWritable(dialect, db).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      throw new DocwrightError(
        'service-unavailable',
        `the database ${location} accepts no writes (${reason}): ${remedy}`,
        { retryAfter: 5, cause: error },
      );
    });
}

function unwritableDataDir(dataDir: string, error: unknown): DocwrightError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return new DocwrightError(
    'service-unavailable',
    `cannot write the data directory ${dataDir} (${code}): docwright keeps its SQLite database there. ` +
      'Make it writable by this user, or set DOCWRIGHT_DATA_DIR to a directory that is ' +
      '(or DATABASE_URL to use PostgreSQL).',
    { cause: error },
  );
}

const statementNames = new Map<string, string>();

/** The name a PostgreSQL connection knows a prepared statement by: one per text, by its digest. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `docwright_${hash('sha256', text, 'hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
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
  const db = new Kysely<Database>({ dialect: new SchemaPostgresDialect({ pool }, schema) });
  const url = new URL(databaseUrl);
  const prepared = async <R>(query: CompiledQuery): Promise<R[]> => {
    // A named statement is parsed and planned once per connection, then only executed.
    const config = { name: statementName(query.sql), text: query.sql, values: [...query.parameters] };
    return (await pool.query(config)).rows as R[];
  };
  const location = `${url.hostname}:${url.port || 5432}${url.pathname} (schema ${schema})`;
  return {
    db,
    dialect: 'postgres',
    location,
    ping: () => pingDatabase(db),
    checkWritable: writableCheck(
      'postgres',
      db,
      location,
      'point DATABASE_URL at the primary server, with a role that may write',
    ),
    read: prepared,
    prepared,
    close: () => db.destroy(),
  };
}
