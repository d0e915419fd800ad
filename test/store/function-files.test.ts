// The PostgreSQL functions whose current definition lives in a `.sql` file beside the code that
// calls it (src/jobs/create_job.sql, src/jobs/queue/claim_run.sql), applied by migration 0022
// (src/store/migrations/function-files.ts). The released migrations that first defined them keep
// their text: a database migrated by an earlier release, then upgraded, must end identical to a
// fresh one, and 0022 must change nothing such a database does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { openStore, type Store } from '../../src/store/database.ts';
import { createJobFunctionMigration } from '../../src/store/migrations/0013-create-job-function.ts';
import { claimRunFunctionMigration } from '../../src/store/migrations/0015-claim-run-function.ts';
import { claimRunReturnsJobMigration } from '../../src/store/migrations/0016-claim-run-returns-job.ts';
import { migrateToLatest } from '../../src/store/migrations.ts';
import { createTestDatabase, storeOptions, type TestDatabase, testDialect } from '../helpers/database.ts';

/** Every function of the test's schema, as PostgreSQL would write it back (`pg_get_functiondef`). */
async function functionDefinitions(db: Kysely<unknown>): Promise<Record<string, string>> {
  const { rows } = await sql<{ name: string; definition: string }>`
    select p.proname as name, pg_get_functiondef(p.oid) as definition
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = current_schema()
     order by p.proname, p.oid`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.name, r.definition]));
}

describe(`function files on ${testDialect}`, {
  skip: testDialect !== 'postgres' && 'skipped: PostgreSQL functions only',
}, () => {
  let database: TestDatabase;
  let store: Store;
  before(async () => {
    database = await createTestDatabase();
    store = await openStore(storeOptions(database));
  });
  after(async () => {
    await store?.close();
    await database?.drop();
  });

  test('a database upgraded past 0022 ends with the functions a fresh one has, and the ones the released migrations wrote', async () => {
    const db = store.db as Kysely<unknown>;
    const fresh = await functionDefinitions(db);
    assert.ok(fresh.claim_run?.includes('for update of r, p skip locked'), 'claim_run, from its file');
    assert.ok(fresh.create_job?.includes('rate_limit_uses'), 'create_job, from its file');

    // As a database the release before 0022 migrated: the functions as 0013, 0015 and 0016 wrote them.
    await sql`drop function create_job`.execute(db);
    await sql`drop function claim_run`.execute(db);
    for (const migration of [
      createJobFunctionMigration('postgres'),
      claimRunFunctionMigration('postgres'),
      claimRunReturnsJobMigration('postgres'),
    ])
      await migration.up(db);
    await sql`delete from kysely_migration where name = '0022_function_files'`.execute(db);
    assert.deepEqual(
      await functionDefinitions(db),
      fresh,
      'the files hold the released functions, unchanged',
    );

    assert.deepEqual(await migrateToLatest(store.db, store.dialect, database.schema), {
      applied: ['0022_function_files'],
    });
    assert.deepEqual(await functionDefinitions(db), fresh, 'upgraded as fresh');
  });
});
