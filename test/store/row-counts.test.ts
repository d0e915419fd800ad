/**
 * Counts kept by the database (`keepRowCounts`, src/store/dialect.ts): `rate_limit_counts` equals
 * the rows of `rate_limit_uses` per project through inserts, deletes and cascades, and on
 * PostgreSQL a row written by another connection while the counts are set up is not missed.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/database.ts';
import { keepRowCounts } from '../../src/store/dialect.ts';
import {
  createTestDatabase,
  projectRow,
  storeOptions,
  TEST_POSTGRES_URL,
  type TestDatabase,
  testDialect,
} from '../helpers/database.ts';

const onlyPostgres =
  testDialect === 'postgres' ? false : 'PostgreSQL only (SQLite migrates under its write lock)';

describe(`counts kept by the database (${testDialect})`, () => {
  let database: TestDatabase;
  let store: Store;

  beforeEach(async () => {
    database = await createTestDatabase();
    store = await openStore(storeOptions(database));
  });
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  const addProject = (id: string) => store.db.insertInto('projects').values(projectRow(id)).execute();

  /** [project, stored rows, kept count] for every project that has either. */
  async function tally(): Promise<[string, number, number | null][]> {
    const { rows } = await sql<{ project_id: string; stored: number | string; kept: number | null }>`
      select p.id as project_id,
             (select count(*) from rate_limit_uses u where u.project_id = p.id) as stored,
             (select uses from rate_limit_counts c where c.project_id = p.id) as kept
      from projects p order by p.id`.execute(store.db);
    return rows.map((r) => [r.project_id, Number(r.stored), r.kept === null ? null : Number(r.kept)]);
  }

  const use = (projectId: string, minute: number) => ({
    project_id: projectId,
    used_at: new Date(Date.UTC(2026, 10, 25, 12, minute)).toISOString(),
  });

  test('inserts of one and of many rows, deletes of many, and a cascade are all counted', async () => {
    await addProject('prj_a');
    await addProject('prj_b');
    await store.db.insertInto('rate_limit_uses').values(use('prj_a', 0)).execute();
    await store.db
      .insertInto('rate_limit_uses')
      .values([use('prj_a', 1), use('prj_a', 2), use('prj_b', 3), use('prj_a', 4)])
      .execute();
    assert.deepEqual(await tally(), [
      ['prj_a', 4, 4],
      ['prj_b', 1, 1],
    ]);

    await store.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('rate_limit_uses').where('used_at', '<=', use('', 3).used_at).execute();
      await trx.insertInto('rate_limit_uses').values(use('prj_b', 5)).execute();
    });
    assert.deepEqual(await tally(), [
      ['prj_a', 1, 1],
      ['prj_b', 1, 1],
    ]);

    // A rolled-back write is not counted.
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await trx.insertInto('rate_limit_uses').values(use('prj_a', 6)).execute();
        throw new Error('changed my mind');
      }),
    );
    assert.deepEqual((await tally())[0], ['prj_a', 1, 1]);

    await store.db.deleteFrom('projects').where('id', '=', 'prj_a').execute();
    assert.deepEqual(await tally(), [['prj_b', 1, 1]]);
    const kept = await store.db.selectFrom('rate_limit_counts').select('project_id').execute();
    assert.deepEqual(kept, [{ project_id: 'prj_b' }], 'the count went with its project');
  });

  test('a row another connection writes while the counts are set up is counted', {
    skip: onlyPostgres,
  }, async () => {
    await sql`create table items (id serial primary key, k text not null)`.execute(store.db);
    await sql`create table item_counts (k text primary key, n integer not null)`.execute(store.db);
    await sql`insert into items (k) values ('a'), ('a'), ('b')`.execute(store.db);

    // Another docwright, still serving, has written a row and not yet committed it.
    const other = new pg.Client({
      connectionString: TEST_POSTGRES_URL,
      options: `-c search_path=${database.schema}`,
    });
    await other.connect();
    try {
      await other.query('begin');
      await other.query(`insert into items (k) values ('a')`);
      const setUp = store.db
        .transaction()
        .execute((trx) =>
          keepRowCounts('postgres', trx, { table: 'items', key: 'k', counts: 'item_counts', column: 'n' }),
        );
      await new Promise((resolve) => setTimeout(resolve, 300));
      await other.query('commit');
      await setUp;
    } finally {
      await other.end();
    }
    await sql`insert into items (k) values ('b')`.execute(store.db);
    const { rows } = await sql<{ k: string; n: number }>`select k, n from item_counts order by k`.execute(
      store.db,
    );
    assert.deepEqual(rows, [
      { k: 'a', n: 3 },
      { k: 'b', n: 2 },
    ]);
  });
});
