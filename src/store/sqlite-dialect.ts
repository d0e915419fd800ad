import path from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
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
import { retry } from '../retry.ts';
import type { CheckpointMessage } from './sqlite-checkpointer.ts';
import { flushDescriptor } from './sqlite-flush-descriptor.ts';
import { GroupCommit, type Lease } from './sqlite-group-commit.ts';

/**
 * Kysely dialect for the built-in `node:sqlite` (no native addon to compile).
 *
 * Differs from Kysely's better-sqlite3 dialect in one deliberate way: transactions
 * start with `BEGIN IMMEDIATE`, so a transaction takes the write lock before its
 * first read. The rate limit reads a count and then inserts; with a deferred
 * `BEGIN`, two processes could both read the same count.
 */
export interface NodeSqliteOptions {
  /**
   * Size of the write-ahead log past which it is started over as soon as all of it is copied
   * into the database (default 256 MiB). Its file stays as large as it grew (to reuse it), up to
   * twice this.
   */
  walLimitBytes?: number;
  /**
   * Longest a group commit keeps the write lock before committing (default 10 ms; see
   * sqlite-group-commit.ts).
   */
  groupCommitMaxOpenMs?: number;
}

export class NodeSqliteDialect implements Dialect {
  readonly #file: string;
  readonly #options: NodeSqliteOptions;
  #driver: NodeSqliteDriver | undefined;

  constructor(file: string, options: NodeSqliteOptions = {}) {
    this.#file = file;
    this.#options = options;
  }

  /**
   * The connection's `PRAGMA data_version` (see dialect.ts), read at once: the pragma only
   * reads, and answers for the connection, so it may run while another caller's transaction
   * holds the connection. Undefined before the connection opens or when SQLite cannot tell.
   */
  dataVersion(): number | undefined {
    return this.#driver?.dataVersion();
  }

  /** See `NodeSqliteDriver.changes`. */
  changes(): string | undefined {
    return this.#driver?.changes();
  }

  /** See `NodeSqliteDriver.readNow`. */
  readNow<R>(query: CompiledQuery): R[] | undefined {
    return this.#driver?.readNow<R>(query);
  }

  createAdapter(): DialectAdapter {
    return new NodeSqliteAdapter();
  }
  createDriver(): Driver {
    this.#driver = new NodeSqliteDriver(this.#file, this.#options);
    return this.#driver;
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
  /**
   * One connection, but the driver hands it out in turn itself (sqlite-group-commit.ts): Kysely's
   * own mutex would keep the next transaction waiting until the previous one's group committed.
   */
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/**
 * How often the checkpoint thread copies the write-ahead log into the database. Often, so that
 * each pass has little to copy, and the one pass that holds the server's writes (sqlite-checkpointer.ts)
 * least of all: at a paced 1,000 creates/s every 1 s gave a p99 of 29–51 ms, every 200 ms 14–29 ms
 * (bench/api.ts). A pass that finds nothing to copy only reads the log's index.
 */
const CHECKPOINT_INTERVAL_MS = 200;

/** See `NodeSqliteOptions.walLimitBytes`. */
const WAL_LIMIT_BYTES = 256 * 1024 * 1024;

/** Longest the checkpoint thread may hold this process's writes (it needs a few milliseconds). */
const MAX_WRITE_HOLD_MS = 1_000;

/** How long a statement keeps retrying while another process holds the database's lock. */
const BUSY_WAIT_MS = 10_000;

class NodeSqliteDriver implements Driver {
  readonly #file: string;
  readonly #walLimitBytes: number;
  readonly #groupCommitMaxOpenMs: number | undefined;
  #db: DatabaseSync | undefined;
  #connection: NodeSqliteConnection | undefined;
  #transactions: GroupCommit | undefined;
  #dataVersion: StatementSync | undefined;
  #checkpointer: Worker | undefined;
  /** The connection held for the checkpoint thread (`#holdWrites`), and the count of holds asked for. */
  #writesHeld: { lease: Lease; timer: NodeJS.Timeout } | undefined;
  #holds = 0;

  constructor(file: string, options: NodeSqliteOptions) {
    this.#file = file;
    this.#walLimitBytes = options.walLimitBytes ?? WAL_LIMIT_BYTES;
    this.#groupCommitMaxOpenMs = options.groupCommitMaxOpenMs;
  }

  dataVersion(): number | undefined {
    if (!this.#db) return undefined;
    try {
      this.#dataVersion ??= this.#db.prepare('pragma data_version');
      return Number((this.#dataVersion.get() as { data_version: number }).data_version);
    } catch {
      return undefined;
    }
  }

  /**
   * A token that stays the same as long as the database holds what it held when the token was
   * taken: another connection's commit changes `data_version`, and a statement of this one
   * that may write changes its count of writes.
   */
  changes(): string | undefined {
    const version = this.dataVersion();
    return version === undefined || !this.#connection ? undefined : `${version}:${this.#connection.writes}`;
  }

  /**
   * Runs a read at once, synchronously, when the connection is idle (no transaction holds it, no
   * group waits for its COMMIT); undefined when it is not, or when another process holds a lock
   * (the caller then goes through Kysely, which waits and retries). The hot reads skip the
   * executor's acquire and release: a third of a poll's database time.
   */
  readNow<R>(query: CompiledQuery): R[] | undefined {
    const connection = this.#connection;
    if (!connection || !this.#transactions?.idle()) return undefined;
    try {
      return connection.executeNow<R>(query).rows;
    } catch (error) {
      if (isBusy(error)) return undefined;
      throw error;
    }
  }

  async init(): Promise<void> {
    // No busy timeout: SQLite's own wait would block the event loop for as long as another
    // process holds the write lock. A busy statement is retried asynchronously instead.
    const db = new DatabaseSync(this.#file, { timeout: 0 });
    this.#db = db;
    // Switching to WAL needs a moment of exclusive access: another process may be opening the file too.
    await whileBusy(() => db.exec('PRAGMA journal_mode = WAL'));
    this.#db.exec('PRAGMA synchronous = NORMAL');
    // A group commit's savepoints journal every page a member changes; on disk, that journal
    // spilled to a temporary file for most members (sqlite-group-commit.ts).
    this.#db.exec('PRAGMA temp_store = MEMORY');
    // Checkpoints stall the connection that runs them while they copy and sync: this one never
    // does; a thread of its own checkpoints once the process has written (see sqlite-checkpointer.ts).
    this.#db.exec('PRAGMA wal_autocheckpoint = 0');
    // A log started over writes its file again from the start. Truncating the file to the limit
    // each time stalled the event loop for 30–90 ms (the first commit after does it); only a file
    // grown past twice the limit (by a transaction larger than the limit) is truncated.
    this.#db.exec(`PRAGMA journal_size_limit = ${2 * this.#walLimitBytes}`);
    this.#startCheckpointer();
    this.#db.exec('PRAGMA foreign_keys = ON');
    const connection = new NodeSqliteConnection(this.#db);
    this.#connection = connection;
    this.#transactions = new GroupCommit(
      {
        run: async (sql) => {
          await connection.executeQuery(CompiledQuery.raw(sql));
        },
        inTransaction: () => db.isTransaction,
      },
      { maxOpenMs: this.#groupCommitMaxOpenMs },
    );
  }

  /**
   * One connection, taken in turn: a transaction holds it from BEGIN to COMMIT, so that no other
   * query of this process runs inside someone else's transaction (Kysely's own SQLite driver
   * does the same) — except as a member of the same group commit (sqlite-group-commit.ts).
   */
  async acquireConnection(): Promise<DatabaseConnection> {
    return new LeasedConnection(this.#connection!, await this.#transactions!.acquire());
  }

  async beginTransaction(): Promise<void> {
    await this.#transactions!.begin();
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#transactions!.commit((connection as LeasedConnection).lease);
  }

  #startCheckpointer(): void {
    const here = fileURLToPath(import.meta.url);
    this.#checkpointer = new Worker(
      fileURLToPath(new URL(`./sqlite-checkpointer${path.extname(here)}`, import.meta.url)),
      {
        workerData: {
          file: this.#file,
          intervalMs: CHECKPOINT_INTERVAL_MS,
          walLimitBytes: this.#walLimitBytes,
          flushFd: flushDescriptor(this.#file),
        },
      },
    );
    // It must not keep a process alive: the last connection to close checkpoints what is left.
    this.#checkpointer.unref();
    this.#checkpointer.on('error', () => {});
    this.#checkpointer.on('message', (message: CheckpointMessage) => {
      if (message.type === 'hold-writes') void this.#holdWrites();
      if (message.type === 'release-writes') this.#releaseWrites();
    });
  }

  /** Holds this process's writes while the checkpoint thread catches up with the log (see there). */
  async #holdWrites(): Promise<void> {
    const hold = ++this.#holds;
    const lease = await this.#transactions!.hold();
    // Released (or closed) before the connection was ours.
    if (hold !== this.#holds || !this.#checkpointer) return void this.#transactions!.release(lease);
    // However the thread fares, writes wait no longer than this.
    const timer = setTimeout(() => this.#releaseWrites(), MAX_WRITE_HOLD_MS).unref();
    this.#writesHeld = { lease, timer };
    this.#checkpointer.postMessage({ type: 'writes-held' } satisfies CheckpointMessage);
  }

  #releaseWrites(): void {
    this.#holds++;
    const held = this.#writesHeld;
    this.#writesHeld = undefined;
    if (!held) return;
    clearTimeout(held.timer);
    void this.#transactions!.release(held.lease);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#transactions!.rollback((connection as LeasedConnection).lease);
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.#transactions!.release((connection as LeasedConnection).lease);
  }

  async destroy(): Promise<void> {
    const checkpointer = this.#checkpointer;
    this.#checkpointer = undefined;
    await checkpointer?.terminate();
    this.#releaseWrites();
    await this.#transactions?.flush();
    this.#db?.close();
    this.#db = undefined;
  }
}

/** The connection as one holder has it, from acquire to release. */
class LeasedConnection implements DatabaseConnection {
  readonly #connection: NodeSqliteConnection;
  readonly lease: Lease;

  constructor(connection: NodeSqliteConnection, lease: Lease) {
    this.#connection = connection;
    this.lease = lease;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#connection.executeQuery(query);
  }

  streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    return this.#connection.streamQuery(query);
  }
}

interface PreparedStatement {
  statement: StatementSync;
  /** Whether it yields rows (SELECT, RETURNING…) or only runs. */
  returnsRows: boolean;
  /** Whether it may change what the database holds (anything but a query); see `writes`. */
  mayWrite: boolean;
  /** Turns a row as node:sqlite returns it into the plain object callers get (as from pg). */
  toRow: (row: unknown) => Record<string, unknown>;
}

/** A SELECT, or a PRAGMA that only reads a setting: statements that change nothing. */
const QUERY_ONLY = /^\s*(?:select\b|pragma\s+[\w.]+\s*;?\s*$)/i;

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  // Preparing is a large share of a short query's cost; statements are reused.
  readonly #statements = new Map<string, PreparedStatement>();
  /**
   * How many statements that may write this connection has run. SQLite's `data_version` tells
   * of other connections' commits, never of this one's own: with it, a token for "nothing
   * changed" (see `NodeSqliteDriver.changes`).
   */
  writes = 0;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  #prepare(sql: string): PreparedStatement {
    let prepared = this.#statements.get(sql);
    if (!prepared) {
      const statement = this.#db.prepare(sql);
      const yieldsRows = returnsRows(statement, sql);
      prepared = {
        statement,
        returnsRows: yieldsRows,
        mayWrite: !QUERY_ONLY.test(sql),
        toRow: yieldsRows ? rowMaker(statement) : copyRow,
      };
      if (this.#statements.size > 500) this.#statements.clear();
      this.#statements.set(sql, prepared);
    }
    return prepared;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return whileBusy(() => this.executeNow(query));
  }

  /** Runs the statement synchronously (SQLITE_BUSY is thrown, not waited for). */
  executeNow<R>(query: CompiledQuery): QueryResult<R> {
    const { statement, returnsRows, mayWrite, toRow } = this.#prepare(query.sql);
    if (mayWrite) this.writes++;
    const parameters = query.parameters.map(toSqliteValue);
    if (returnsRows) return { rows: statement.all(...parameters).map(toRow) as R[] };
    const { changes, lastInsertRowid } = statement.run(...parameters);
    return {
      rows: [],
      numAffectedRows: BigInt(changes),
      insertId: BigInt(lastInsertRowid),
    };
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const { statement, mayWrite, toRow } = this.#prepare(query.sql);
    if (mayWrite) this.writes++;
    for (const row of statement.iterate(...query.parameters.map(toSqliteValue))) {
      yield { rows: [toRow(row) as R] };
    }
  }
}

/**
 * Runs a statement, and while SQLite answers SQLITE_BUSY (another process holds the lock) runs
 * it again after a short asynchronous wait, for up to BUSY_WAIT_MS: the event loop stays free.
 */
async function whileBusy<T>(statement: () => T): Promise<T> {
  // The first try runs at once and alone: nearly every statement succeeds on it.
  try {
    return statement();
  } catch (error) {
    if (!isBusy(error)) throw error;
  }
  return retry(async () => statement(), {
    retryable: isBusy,
    attempts: Number.POSITIVE_INFINITY,
    withinMs: BUSY_WAIT_MS,
    baseDelayMs: 2,
    maxDelayMs: 50,
    jitter: 'equal',
  });
}

/** SQLITE_BUSY (5) and its extended codes: another connection holds the lock. */
function isBusy(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown }).errcode;
  return typeof errcode === 'number' ? (errcode & 0xff) === 5 : /database is locked/.test(String(error));
}

function returnsRows(statement: StatementSync, sql: string): boolean {
  // `columns()` exists from Node 22.16; older 22.x falls back to reading the SQL.
  if (typeof statement.columns === 'function') return statement.columns().length > 0;
  return /^\s*(select|with|pragma|values)\b|\breturning\b/i.test(sql);
}

/** node:sqlite's own rows have a null prototype, and are slow to read: callers get a copy. */
const copyRow = (row: unknown) => ({ ...(row as Record<string, unknown>) });

/**
 * Rows read as arrays and made into objects here cost a quarter of node:sqlite's own objects and
 * their copy (4.5 vs 16–19 µs for a 30-column row); before Node 24, a copy of its objects.
 */
function rowMaker(statement: StatementSync): PreparedStatement['toRow'] {
  if (typeof statement.setReturnArrays !== 'function') return copyRow;
  statement.setReturnArrays(true);
  const names = statement.columns().map((column) => column.name);
  return (row) => {
    const values = row as unknown[];
    const object: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) object[names[i]!] = values[i];
    return object;
  };
}

function toSqliteValue(value: unknown): SQLInputValue {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value as SQLInputValue;
}
