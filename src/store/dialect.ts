import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import { compiledQuery } from './compiled-query.ts';
import type { Database, ProjectRow } from './schema.ts';

/**
 * Every difference between SQLite and PostgreSQL lives in this file.
 * Callers ask for an intent ("lock this project for the rest of the
 * transaction", "an auto-increment key") and get the dialect's way of doing it.
 */
export type DialectName = 'sqlite' | 'postgres';

/** Adds an auto-incrementing integer primary key named `id`. */
export function withAutoIncrementId<T extends string>(
  dialect: DialectName,
  table: CreateTableBuilder<T, never>,
): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres'
    ? table.addColumn('id', 'bigserial', (c: ColumnDefinitionBuilder) => c.primaryKey())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}

/**
 * Reads a project and serialises its writers until the transaction ends,
 * across processes. PostgreSQL takes a row lock; SQLite already holds the
 * database write lock (`BEGIN IMMEDIATE`). Undefined when it does not exist.
 */
export async function lockProject(
  dialect: DialectName,
  trx: Transaction<Database>,
  projectId: string,
): Promise<ProjectRow | undefined> {
  const query = dialect === 'postgres' ? projectForUpdate : projectById;
  return (await trx.executeQuery(query(trx, { id: projectId }))).rows[0];
}

const projectById = compiledQuery<{ id: string }, ProjectRow>(['id'], (db, p) =>
  db.selectFrom('projects').selectAll().where('id', '=', p.id).compile(),
);
const projectForUpdate = compiledQuery<{ id: string }, ProjectRow>(['id'], (db, p) =>
  db.selectFrom('projects').selectAll().where('id', '=', p.id).forUpdate().compile(),
);

/**
 * Serialises the transactions that take the lock of `name` until they end, across processes.
 * PostgreSQL takes a transaction-level advisory lock; SQLite already holds the write lock.
 */
export async function lockNamed(
  dialect: DialectName,
  trx: Transaction<Database>,
  name: string,
): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(trx);
}

/** A table whose rows are counted per key in a column of another table. */
export interface RowCount {
  /** The table whose rows are counted. */
  table: string;
  /** The column of `table` they are counted by, and the primary key of `counts`. */
  key: string;
  /** The table that holds the counts. */
  counts: string;
  /** The column of `counts` that holds them. */
  column: string;
}

/**
 * Fills `counts.column` with the number of rows of `table` per `key`, and keeps it equal to them
 * from then on by triggers: every insert and delete is counted in its own transaction, whichever
 * statement or cascade made it. PostgreSQL counts once per statement (from its transition
 * tables), SQLite once per row. Run it in a migration's transaction: on PostgreSQL the table is
 * locked against writes first, so that no row (an older docwright's, still serving) is written
 * between the fill and the triggers; a SQLite migration already holds the database's write lock.
 */
export async function keepRowCounts<DB>(
  dialect: DialectName,
  db: Kysely<DB>,
  { table, key, counts, column }: RowCount,
): Promise<void> {
  const [t, k, c, n] = [table, key, counts, column].map((name) => sql.id(name));
  if (dialect === 'postgres') await sql`lock table ${t} in share row exclusive mode`.execute(db);
  await sql`insert into ${c} (${k}, ${n}) select ${k}, count(*) from ${t} group by ${k}`.execute(db);
  if (dialect === 'sqlite') {
    await sql`create trigger ${sql.id(`${table}_counted_insert`)} after insert on ${t} begin
      insert into ${c} (${k}, ${n}) values (new.${k}, 1) on conflict (${k}) do update set ${n} = ${n} + 1;
    end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_counted_delete`)} after delete on ${t} begin
      update ${c} set ${n} = ${n} - 1 where ${k} = old.${k};
    end`.execute(db);
    return;
  }
  const added = sql.id(`${table}_count_added`);
  const removed = sql.id(`${table}_count_removed`);
  await sql`create function ${added}() returns trigger language plpgsql as $$ begin
      insert into ${c} (${k}, ${n}) select ${k}, count(*) from added group by ${k}
      on conflict (${k}) do update set ${n} = ${c}.${n} + excluded.${n};
      return null;
    end $$`.execute(db);
  await sql`create function ${removed}() returns trigger language plpgsql as $$ begin
      update ${c} set ${n} = ${c}.${n} - gone.rows
      from (select ${k}, count(*) as rows from removed group by ${k}) as gone where ${c}.${k} = gone.${k};
      return null;
    end $$`.execute(db);
  await sql`create trigger ${sql.id(`${table}_counted_insert`)} after insert on ${t}
    referencing new table as added for each statement execute function ${added}()`.execute(db);
  await sql`create trigger ${sql.id(`${table}_counted_delete`)} after delete on ${t}
    referencing old table as removed for each statement execute function ${removed}()`.execute(db);
}

/** A cheap round trip that proves the database answers. */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * Throws when the database answers but would refuse a write (a read-only file or directory, a
 * standby, a role made read-only), changing nothing. SQLite decides only when a statement
 * starts a write, so one that matches no row asks it; PostgreSQL says so in a setting.
 */
export async function probeWritable(dialect: DialectName, db: Kysely<Database>): Promise<void> {
  if (dialect === 'sqlite') {
    await sql`update kysely_migration set name = name where 0`.execute(db);
    return;
  }
  const { rows } = await sql<{
    readOnly: string;
  }>`select current_setting('transaction_read_only') as "readOnly"`.execute(db);
  if (rows[0]?.readOnly === 'on') {
    throw Object.assign(new Error('transaction_read_only is on'), {
      code: '25006',
    });
  }
}
/**
 * A unique-constraint violation, in either dialect (PostgreSQL 23505; node:sqlite reports
 * SQLITE_CONSTRAINT_UNIQUE, extended code 2067).
 */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  return code === '23505' || errcode === 2067 || /UNIQUE constraint failed/.test(error.message);
}
