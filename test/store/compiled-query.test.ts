/** A query compiled once per database and run with each call's values (src/store/compiled-query.ts). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { compiledQuery } from '../../src/store/compiled-query.ts';
import type { ApiKeyRow } from '../../src/store/schema.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';

describe(`compiledQuery (${testDialect})`, () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
  });
  after(async () => {
    await t.close();
  });

  test('each call runs with its own values, a value used twice fills both places, constants stay', async () => {
    let builds = 0;
    const keysNamed = compiledQuery<{ name: string; projectId: string }, Pick<ApiKeyRow, 'id' | 'name'>>(
      ['projectId', 'name'],
      (db, q) => {
        builds++;
        return db
          .selectFrom('api_keys')
          .select(['id', 'name'])
          .where('project_id', '=', q.projectId)
          .where((eb) => eb.or([eb('name', '=', q.name), eb('last_four', '=', q.name)]))
          .where('revoked_at', 'is', null)
          .where('hash', '!=', 'a constant the builder wrote')
          .compile();
      },
    );
    const { db } = t.app.store;
    for (const name of ['first', 'second']) {
      await db
        .insertInto('api_keys')
        .values({
          id: `key_cq_${name}`,
          project_id: p.projectId,
          name,
          hash: `hash-cq-${name}`,
          last_four: 'zzzz',
          created_at: new Date().toISOString(),
          expires_at: null,
          revoked_at: null,
          last_used_at: null,
        })
        .execute();
    }
    const first = await db.executeQuery(keysNamed(db, { projectId: p.projectId, name: 'first' }));
    const second = await t.app.store.db
      .transaction()
      .execute((trx) => trx.executeQuery(keysNamed(trx, { projectId: p.projectId, name: 'second' })));
    const none = await db.executeQuery(keysNamed(db, { projectId: 'prj_other', name: 'first' }));
    assert.deepEqual(first.rows, [{ id: 'key_cq_first', name: 'first' }]);
    assert.deepEqual(second.rows, [{ id: 'key_cq_second', name: 'second' }]);
    assert.deepEqual(none.rows, []);
    // The database and its transactions share one compilation.
    assert.equal(builds, 1);
    const compiled = keysNamed(db, { projectId: 'p', name: 'n' });
    assert.deepEqual(compiled.parameters, ['p', 'n', 'n', 'a constant the builder wrote']);
  });

  test('a missing value is bound as NULL', async () => {
    const echo = compiledQuery<{ value: string | null }, { value: string | null }>(['value'], (db, q) =>
      sql<{ value: string | null }>`select ${q.value} as value`.compile(db),
    );
    const { rows } = await t.app.store.db.executeQuery(echo(t.app.store.db, { value: undefined as never }));
    assert.deepEqual(rows, [{ value: null }]);
  });

  test('a value that does not reach the SQL as one parameter is refused when compiling', () => {
    const { db } = t.app.store;
    const insideJson = compiledQuery<{ name: string }>(['name'], (d, q) =>
      sql`select ${JSON.stringify({ name: q.name })} as data`.compile(d),
    );
    assert.throws(() => insideJson(db, { name: 'x' }), /a parameter is not one value/);
    const unused = compiledQuery<{ name: string; other: string }>(['name', 'other'], (d, q) =>
      sql`select ${q.name} as name`.compile(d),
    );
    assert.throws(() => unused(db, { name: 'x', other: 'y' }), /other never reached the SQL/);
  });
});
