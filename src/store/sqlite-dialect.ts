import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';

/**
 * Kysely dialect for the built-in `node:sqlite` (no native addon to compile).
 *
 * Differs from Kysely's better-sqlite3 dialect in one deliberate way: transactions
 * start with `BEGIN IMMEDIATE`, so a transaction takes the write lock before its
 * first read. The rate limit reads a count and then inserts; with a deferred
 * `BEGIN`, two processes could both read the same count.
 */
export class NodeSqliteDialect implements Dialect {
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  createAdapter(): DialectAdapter {
    return new NodeSqliteAdapter();
  }
  createDriver(): Driver {
    return new NodeSqliteDriver(this.#file);
  }
  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own signature
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

/**
 * SQLite does run DDL inside transactions. Saying so makes Kysely's migrator
 * work in one `BEGIN IMMEDIATE` transaction, which is what serialises
 * processes migrating the same file at once (its lock is a no-op on SQLite).
 */
class NodeSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class NodeSqliteDriver implements Driver {
  readonly #file: string;
  #db: DatabaseSync | undefined;
  #connection: NodeSqliteConnection | undefined;

  constructor(file: string) {
    this.#file = file;
  }

  async init(): Promise<void> {
    // `timeout` is SQLite's busy timeout: another process holding the write lock
    // makes us wait instead of failing with SQLITE_BUSY.
    this.#db = new DatabaseSync(this.#file, { timeout: 10_000 });
    this.#db.exec('PRAGMA journal_mode = WAL');
    this.#db.exec('PRAGMA synchronous = NORMAL');
    // Checkpoints stall the (synchronous) connection while they copy and fsync;
    // fewer, larger ones write each hot page once instead of many times.
    this.#db.exec('PRAGMA wal_autocheckpoint = 4000');
    this.#db.exec('PRAGMA foreign_keys = ON');
    this.#connection = new NodeSqliteConnection(this.#db);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // Kysely serialises access (SqliteAdapter has no multiple connections).
    return this.#connection!;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.#db?.close();
    this.#db = undefined;
  }
}

interface PreparedStatement {
  statement: StatementSync;
  /** Whether it yields rows (SELECT, RETURNING…) or only runs. */
  returnsRows: boolean;
}

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  // Preparing is a large share of a short query's cost; statements are reused.
  readonly #statements = new Map<string, PreparedStatement>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  #prepare(sql: string): PreparedStatement {
    let prepared = this.#statements.get(sql);
    if (!prepared) {
      const statement = this.#db.prepare(sql);
      prepared = { statement, returnsRows: returnsRows(statement, sql) };
      if (this.#statements.size > 500) this.#statements.clear();
      this.#statements.set(sql, prepared);
    }
    return prepared;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { statement, returnsRows } = this.#prepare(query.sql);
    const parameters = query.parameters.map(toSqliteValue);
    if (returnsRows) {
      // node:sqlite rows have a null prototype; give callers plain objects as pg does.
      return { rows: statement.all(...parameters).map((row) => ({ ...row })) as R[] };
    }
    const { changes, lastInsertRowid } = statement.run(...parameters);
    return {
      rows: [],
      numAffectedRows: BigInt(changes),
      insertId: BigInt(lastInsertRowid),
    };
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const { statement } = this.#prepare(query.sql);
    for (const row of statement.iterate(...query.parameters.map(toSqliteValue))) {
      yield { rows: [{ ...row } as R] };
    }
  }
}

function returnsRows(statement: StatementSync, sql: string): boolean {
  // `columns()` exists from Node 22.16; older 22.x falls back to reading the SQL.
  if (typeof statement.columns === 'function') return statement.columns().length > 0;
  return /^\s*(select|with|pragma|values)\b|\breturning\b/i.test(sql);
}

function toSqliteValue(value: unknown): SQLInputValue {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value as SQLInputValue;
}
