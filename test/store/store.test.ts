import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore, type StoreOptions } from '../../src/store/database.ts';
import { migrateToLatest } from '../../src/store/migrations.ts';
import {
  ALL_MIGRATIONS,
  createTestDatabase,
  projectRow,
  storeOptions,
  TEST_POSTGRES_URL,
  type TestDatabase,
  testDialect,
} from '../helpers/database.ts';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');

describe(`store on ${testDialect}`, () => {
  let database: TestDatabase;
  let options: StoreOptions;
  before(async () => {
    database = await createTestDatabase();
    options = storeOptions(database);
  });
  after(() => database.drop());

  test('three processes migrating at once: applied once, then nothing to do', async () => {
    // One process holds one connection; concurrency between processes is the real case.
    const runs = await Promise.all(
      [1, 2, 3].map(() =>
        run(process.execPath, [BIN, 'migrate', '--json'], { env: { ...process.env, ...database.env } }).then(
          (r) => JSON.parse(r.stdout),
        ),
      ),
    );
    assert.deepEqual(
      runs.flatMap((r) => r.applied),
      ALL_MIGRATIONS,
      'exactly one process applied each',
    );
    const store = await openStore(options);
    try {
      if (testDialect === 'sqlite') assert.ok(existsSync(path.join(database.dataDir, 'docwright.db')));
      assert.deepEqual(await migrateToLatest(store.db, store.dialect, database.schema), { applied: [] });
      const tables = (await store.db.introspection.getTables()).map((t) => t.name).sort();
      for (const table of [
        'api_keys',
        'idempotency_keys',
        'job_events',
        'job_runs',
        'jobs',
        'operators',
        'projects',
        'rate_limit_counts',
        'rate_limit_uses',
        'sessions',
      ]) {
        assert.ok(tables.includes(table), table);
      }
      await store.ping();
    } finally {
      await store.close();
    }
  });

  test('tables live in their own PostgreSQL schema (isolation between tests and tenants)', {
    skip: testDialect !== 'postgres' && 'skipped: PostgreSQL schemas only',
  }, async () => {
    const store = await openStore(options);
    try {
      const { rows } = await sql<{
        table_schema: string;
      }>`select distinct table_schema from information_schema.tables where table_name = 'jobs' and table_schema = ${database.schema!}`.execute(
        store.db,
      );
      assert.equal(rows.length, 1);
      assert.match(store.location, new RegExp(`schema ${database.schema}`));
      assert.doesNotMatch(store.location, /postgres@/, 'the location names no user or password');
    } finally {
      await store.close();
    }
  });

  test('a new schema migrates while other schemas of the database come and go (other tenants, other tests)', {
    skip: testDialect !== 'postgres' && 'skipped: PostgreSQL schemas only',
  }, async () => {
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    let churning = true;
    const prefix = `t_churn_${randomBytes(4).toString('hex')}`;
    const churn = (async () => {
      for (let i = 0; churning; i++) {
        await admin.query(
          `create schema ${prefix}_${i}; create table ${prefix}_${i}.t (id serial primary key, a text)`,
        );
        await admin.query(`drop schema ${prefix}_${i} cascade`);
      }
    })();
    const databases: TestDatabase[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const database = await createTestDatabase();
        databases.push(database);
        const store = await openStore({ ...options, databaseSchema: database.schema });
        await store.close();
      }
    } finally {
      churning = false;
      await churn;
      await admin.end();
      for (const database of databases) await database.drop();
    }
  });

  test('event ids increase and come back as numbers on both dialects', async () => {
    const store = await openStore(options);
    try {
      const at = new Date().toISOString();
      await store.db.insertInto('projects').values(projectRow('prj_x', at)).execute();
      await store.db
        .insertInto('jobs')
        .values({
          id: 'job_x',
          project_id: 'prj_x',
          status: 'active',
          repository: 'file:///x',
          ref: 'main',
          model: '',
          draft: null,
          pr_link: null,
          branch: null,
          summary: null,
          error_code: null,
          error_message: null,
          input_tokens: null,
          output_tokens: null,
          created_at: at,
          updated_at: at,
          archived_at: null,
        })
        .execute();
      const { appendEvents, listEvents } = await import('../../src/jobs/events.ts');
      await appendEvents(
        store.db,
        [
          { jobId: 'job_x', type: 'a' },
          { jobId: 'job_x', type: 'b', data: { n: 1 } },
        ],
        new Date(),
      );
      const events = await listEvents(store.db, 'job_x', { limit: 10 });
      assert.deepEqual(
        events.map((e) => e.type),
        ['a', 'b'],
      );
      assert.equal(typeof events[0]!.id, 'number');
      assert.ok(events[1]!.id > events[0]!.id);
      assert.deepEqual(events[1]!.data, { n: 1 });
      assert.deepEqual(
        await listEvents(store.db, 'job_x', { after: events[0]!.id, limit: 10 }).then((e) =>
          e.map((x) => x.type),
        ),
        ['b'],
      );
    } finally {
      await store.close();
    }
  });
});
