/**
 * The store's hot read path (`Store.read`) and its change token (`Store.changes`). On SQLite a
 * read runs at once when the connection is free; on PostgreSQL it is a named statement.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { openStore, type Store } from '../../src/store/database.ts';
import { createTestDatabase, storeOptions, type TestDatabase, testDialect } from '../helpers/database.ts';

const onlySqlite = testDialect === 'sqlite' ? false : 'SQLite only (run with DOCWRIGHT_TEST_DB=sqlite)';

describe(`Store.read (${testDialect})`, () => {
  let database: TestDatabase;
  let store: Store;
  /** Another connection to the SQLite file: another process, as far as the store can tell. */
  let other: DatabaseSync | undefined;
  let names: CompiledQuery;

  beforeEach(async () => {
    database = await createTestDatabase();
    store = await openStore({ ...storeOptions(database), migrate: false });
    if (database.schema) await sql.raw(`create schema ${database.schema}`).execute(store.db);
    await sql`create table item (name text not null)`.execute(store.db);
    names = store.db
      .selectFrom('item' as never)
      .select(sql<string>`name`.as('name'))
      .orderBy(sql`name`)
      .compile();
    if (testDialect === 'sqlite') other = new DatabaseSync(path.join(database.dataDir, 'docwright.db'));
  });
  afterEach(async () => {
    other?.close();
    await store.close();
    await database.drop();
  });

  const read = async () => (await store.read<{ name: string }>(names)).map((row) => row.name);
  const insert = (name: string) => sql`insert into item (name) values (${name})`.execute(store.db);

  test('answers as the query builder does, with parameters, run after run', async () => {
    await insert('b');
    await insert('a');
    const byName = store.db
      .selectFrom('item' as never)
      .select(sql<string>`name`.as('name'))
      .where(sql`name`, '=', 'x')
      .compile();
    for (const name of ['a', 'b', 'c']) {
      const query = { ...byName, parameters: [name] };
      assert.deepEqual(await store.read(query), (await store.db.executeQuery(query)).rows);
    }
    assert.deepEqual(await read(), ['a', 'b']);
  });

  test('SQLite: a read sees what another process committed just before it, even in the same turn', {
    skip: onlySqlite,
  }, async () => {
    await insert('a');
    const first = read();
    other!.exec(`insert into item (name) values ('b')`);
    const second = read();
    assert.deepEqual(await first, ['a']);
    assert.deepEqual(await second, ['a', 'b']);
  });

  test('a read while a transaction holds the connection waits for it, and never sees work it undoes', async () => {
    await insert('a');
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const inside = new Promise<void>((resolve) => {
      started = resolve;
    });
    const undone = store.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into item (name) values ('never')`.execute(trx);
        started();
        await held;
        throw new Error('undo');
      })
      .catch((error: Error) => error.message);
    await inside;
    const during = read();
    release();
    assert.equal(await undone, 'undo');
    assert.deepEqual(await during, ['a']);
  });

  test('SQLite: the change token moves with this process’s writes and others’ commits, not with reads', {
    skip: onlySqlite,
  }, async () => {
    await insert('a');
    const start = store.changes!();
    assert.ok(start);
    await read();
    await sql`select count(*) from item`.execute(store.db);
    assert.equal(store.changes!(), start, 'reads change nothing');

    await insert('b');
    const afterOwn = store.changes!();
    assert.notEqual(afterOwn, start, 'a write of this process');

    await sql`update item set name = name where name = 'nobody'`.execute(store.db);
    assert.notEqual(
      store.changes!(),
      afterOwn,
      'a statement that may write counts even if it changed no row',
    );
    const beforeOther = store.changes!();

    other!.exec(`insert into item (name) values ('c')`);
    assert.notEqual(store.changes!(), beforeOther, 'another connection’s commit');
  });

  test('PostgreSQL: there is no change token (nothing may be remembered on it)', {
    skip: testDialect !== 'postgres' && 'PostgreSQL only',
  }, () => {
    assert.equal(store.changes, undefined);
  });
});
