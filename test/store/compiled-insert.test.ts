/** An INSERT compiled once and run with each row's values (src/store/compiled-insert.ts). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { compileInsert } from '../../src/store/compiled-insert.ts';
import type { ApiKeyRow } from '../../src/store/schema.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';

const template: ApiKeyRow = {
  id: '',
  project_id: '',
  name: null,
  hash: '',
  last_four: '',
  created_at: '',
  expires_at: null,
  revoked_at: null,
  last_used_at: null,
};

describe(`compileInsert (${testDialect})`, () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
  });
  after(async () => {
    await t.close();
  });

  test('each value reaches its own column, whatever the order of the row’s keys', async () => {
    const insert = compileInsert(t.app.store.db, 'api_keys', template);
    const rows: ApiKeyRow[] = [1, 2].map((n) => ({
      last_used_at: null,
      revoked_at: `2026-11-2${n}T00:00:00.000Z`,
      expires_at: null,
      created_at: `2026-11-1${n}T00:00:00.000Z`,
      last_four: `abc${n}`,
      hash: `hash-${n}`,
      name: `key ${n}`,
      project_id: p.projectId,
      id: `key_compiled_${n}`,
    }));
    for (const row of rows) await t.app.store.db.executeQuery(insert(row));
    const stored = await t.app.store.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', 'like', 'key_compiled_%')
      .orderBy('id')
      .execute();
    assert.deepEqual(stored, rows);
  });

  test('a template value that is not a plain one (an expression) is refused when compiling', () => {
    // The types allow only plain values; this is what a caller that casts would pass.
    const expression = sql<string>`'now'` as unknown as string;
    assert.throws(
      () => compileInsert(t.app.store.db, 'api_keys', { ...template, created_at: expression }),
      /one parameter per column/,
    );
  });
});
