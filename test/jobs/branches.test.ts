// The record of head branches docwright created (docs/api/mintlify-v1.mdx): kept per project, and filled by the
// migration that introduced it from the pushes made before, so that the jobs of an upgraded
// database continue their own branches.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { isOwnHeadBranch, recordHeadBranch } from '../../src/jobs/branches.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { migrateToLatest } from '../../src/store/migrations.ts';
import {
  ALL_MIGRATIONS,
  createTestDatabase,
  projectRow,
  storeOptions,
  type TestDatabase,
  testDialect,
} from '../helpers/database.ts';

describe(`head branches on ${testDialect}`, () => {
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

  const at = '2026-01-01T00:00:00.000Z';
  const job = (id: string, projectId: string) => ({
    id,
    project_id: projectId,
    status: 'completed' as const,
    repository: 'file:///x',
    ref: 'main',
    model: '',
    created_at: at,
    updated_at: at,
  });
  const event = (jobId: string, type: string, data: unknown) => ({
    job_id: jobId,
    type,
    data: JSON.stringify(data),
    created_at: at,
  });

  test('the migration records every branch pushed before it, per project; the record is kept per project', async () => {
    await store.db
      .insertInto('projects')
      .values([projectRow('prj_a'), projectRow('prj_b')])
      .execute();
    await store.db
      .insertInto('jobs')
      .values([job('job_a1', 'prj_a'), job('job_a2', 'prj_a'), job('job_b1', 'prj_b')])
      .execute();
    await store.db
      .insertInto('job_events')
      .values([
        event('job_a1', 'git.pushed', { branch: 'docwright/a1' }),
        event('job_a2', 'git.pushed', { branch: 'docwright/a1' }),
        event('job_a2', 'git.pushed', { branch: 'release-notes' }),
        event('job_b1', 'job.created', { prompt: 'x', ref: 'feature/never-pushed' }),
      ])
      .execute();
    // As before the migration: no table, neither it nor the migrations after it applied.
    await sql`drop table head_branches`.execute(store.db);
    await sql`drop table server_processes`.execute(store.db);
    await sql`drop table context_repositories`.execute(store.db);
    for (const table of [
      'automation_run_keys',
      'automation_runs',
      'hook_deliveries',
      'automation_poll_cursors',
      'automations',
    ])
      await sql`drop table ${sql.id(table)}`.execute(store.db);
    for (const table of ['jobs', 'job_runs'])
      await sql`alter table ${sql.id(table)} drop column changes`.execute(store.db);
    await sql`alter table projects drop column docs_webhook_secret`.execute(store.db);
    // 0017's and 0018's check columns.
    await sql`alter table projects drop column checks`.execute(store.db);
    await sql`alter table jobs drop column checks`.execute(store.db);
    // 0020's and 0021's tables (pull request comments, Slack), which name jobs.
    for (const table of [
      'comment_follow_ups',
      'comment_poll_cursors',
      'slack_threads',
      'slack_events',
      'slack_links',
    ])
      await sql`drop table ${sql.id(table)}`.execute(store.db);
    // 0019's answer columns.
    for (const column of ['mode', 'answer', 'citations'])
      await sql`alter table jobs drop column ${sql.id(column)}`.execute(store.db);
    if (store.dialect === 'postgres') {
      // 0013's and 0016's functions, and 0014's triggers (with the function they call).
      await sql`drop function create_job`.execute(store.db);
      await sql`drop function claim_run`.execute(store.db);
      await sql`drop function notify_poll_change cascade`.execute(store.db);
    }
    await sql`delete from kysely_migration where name >= '0007'`.execute(store.db);
    assert.deepEqual(await migrateToLatest(store.db, store.dialect, database.schema), {
      applied: ALL_MIGRATIONS.filter((name) => name >= '0007'),
    });

    const own = (projectId: string, branch: string) => isOwnHeadBranch(store.db, projectId, branch);
    assert.equal(await own('prj_a', 'docwright/a1'), true);
    assert.equal(await own('prj_a', 'release-notes'), true);
    assert.equal(await own('prj_b', 'docwright/a1'), false, 'another project’s branch');
    assert.equal(await own('prj_b', 'feature/never-pushed'), false, 'only pushed branches');
    const first = await store.db
      .selectFrom('head_branches')
      .select('job_id')
      .where('branch', '=', 'docwright/a1')
      .executeTakeFirstOrThrow();
    assert.equal(first.job_id, 'job_a1');

    // Recording again (a follow-up's push) changes nothing; another project records its own.
    await recordHeadBranch(store.db, {
      projectId: 'prj_a',
      branch: 'docwright/a1',
      jobId: 'job_a2',
      at: new Date(),
    });
    await recordHeadBranch(store.db, {
      projectId: 'prj_b',
      branch: 'docwright/a1',
      jobId: 'job_b1',
      at: new Date(),
    });
    assert.equal(await own('prj_b', 'docwright/a1'), true);
    const rows = await store.db
      .selectFrom('head_branches')
      .selectAll()
      .orderBy('project_id')
      .orderBy('branch')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.project_id, r.branch, r.job_id]),
      [
        ['prj_a', 'docwright/a1', 'job_a1'],
        ['prj_a', 'release-notes', 'job_a2'],
        ['prj_b', 'docwright/a1', 'job_b1'],
      ],
    );
  });
});
