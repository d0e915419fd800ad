// Upgrades (docs/operations.mdx): a database written by an older docwright is migrated forward at start and
// served as before; one migrated by a newer docwright is refused, naming both versions, with
// nothing in it changed. Real `docwright` processes against SQLite files and PostgreSQL schemas.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import type { AgentJob, JobEvent } from '../../src/client/types.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { migrationStatus } from '../../src/store/migrations.ts';
import { VERSION } from '../../src/version.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { bearer, createGitRepository } from '../helpers/app.ts';
import { createTestDatabase, storeOptions, type TestDatabase, testDialect } from '../helpers/database.ts';
import { runCli, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const _BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');
const DATA = path.resolve(import.meta.dirname, '../data/upgrade');

/** What docwright 0.1 wrote (test/data/upgrade/rows-0.1.sql). */
const OLD = {
  projectId: 'prj_01m84rm357q7scszkdjhdew88r',
  jobId: 'job_01m84rm5pn6b7smndcpjzs8hjm',
  key: 'dwk_jTHNEaoqS5Ya8ZmSNrHLvyDVtBvtarUg0uybPc',
  keyId: 'key_01m84rm3nsxekrc2b3b9awnxvv',
};

const openRaw = (database: TestDatabase) => openStore({ ...storeOptions(database), migrate: false });

/** Runs a file of `;`-terminated statements (one per line, as the data files are written). */
async function execute(store: Store, file: string, replace: Record<string, string> = {}): Promise<void> {
  let text = readFileSync(path.join(DATA, file), 'utf8');
  for (const [from, to] of Object.entries(replace)) text = text.replaceAll(from, to);
  if (testDialect === 'postgres')
    await sql
      .raw(`create schema if not exists ${store.location.match(/schema (\w+)/)![1]}`)
      .execute(store.db);
  for (const statement of text.split('\n').filter((line) => line.trim() && !line.startsWith('--'))) {
    await sql.raw(statement).execute(store.db);
  }
}

/** `docwright <args>` as a user runs it; a start that is not refused would serve forever, so a time limit. */
const docwright = (env: Record<string, string>, ...args: string[]) =>
  runCli(args, env, '', { timeoutMs: 30_000 });

describe(`upgrades on ${testDialect}`, () => {
  let model: ScriptedServer;
  const databases: TestDatabase[] = [];
  const repositories: string[] = [];

  before(async () => {
    model = await startOpenAIServer();
  });
  after(async () => {
    await model?.close();
    await Promise.all(databases.map((d) => d.drop()));
    for (const repo of repositories) rmSync(repo, { recursive: true, force: true });
  });

  test('a docwright 0.1 database (0001_foundation, with a job, a key and its events) migrates at start and serves them', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const repo = createGitRepository({ 'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n' });
    repositories.push(repo);
    execFileSync('git', ['branch', '-m', 'main', 'master'], { cwd: repo });
    const old = await openRaw(database);
    try {
      await execute(old, `0001_foundation.${testDialect}.sql`);
      await execute(old, 'rows-0.1.sql', { '{{REPOSITORY}}': pathToFileURL(repo).href });
    } finally {
      await old.close();
    }

    const server = await startServerProcess({
      ...database.env,
      DOCWRIGHT_MODEL: 'openai-compatible/scripted',
      DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url,
    });
    try {
      const api = (p: string, init: RequestInit = {}) =>
        fetch(`${server.url}/v2/agent/${OLD.projectId}${p}`, {
          ...init,
          headers: { ...bearer(OLD.key), 'content-type': 'application/json' },
        });
      // The old key still authenticates; the old job reads as it was written.
      const response = await api(`/job/${OLD.jobId}`);
      assert.equal(response.status, 200);
      const job = (await response.json()) as AgentJob;
      assert.equal(job.status, 'failed');
      assert.equal(job.error?.code, 'model-not-configured');
      assert.equal(job.createdAt, '2026-11-23T17:52:54.484Z');
      assert.deepEqual(job.source, { repository: pathToFileURL(repo).href, ref: 'master' });
      const events = (await (await api(`/job/${OLD.jobId}/events`)).json()) as { events: JobEvent[] };
      assert.deepEqual(
        events.events.map((e) => e.type),
        ['job.created', 'run.started', 'job.failed'],
      );
      const list = (await (await api('/jobs')).json()) as { jobs: AgentJob[] };
      assert.deepEqual(
        list.jobs.map((j) => j.id),
        [OLD.jobId],
      );

      // And it takes new writes: a follow-up on the old job runs to completion.
      model.push(
        toolCall('edit_file', { path: 'index.mdx', old_string: 'Welcome.', new_string: 'Welcome back.' }),
        toolCall('finish', { title: 'Welcome back', summary: 'Greets returning readers.' }),
      );
      const followUp = await api(`/job/${OLD.jobId}/message`, {
        method: 'POST',
        body: JSON.stringify({ prompt: 'Welcome readers back' }),
      });
      assert.equal(followUp.status, 200, await followUp.clone().text());
      // 0.1 stored one use, long expired: 0006 counted it, so pruning it leaves this one alone in the window.
      assert.match(followUp.headers.get('ratelimit')!, /^"create";r=99;t=3600$/);
      const done = await waitFor(async () => {
        const current = (await (await api(`/job/${OLD.jobId}`)).json()) as AgentJob;
        return current.status === 'active' ? undefined : current;
      });
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      const after = (await (await api(`/job/${OLD.jobId}/events`)).json()) as { events: JobEvent[] };
      assert.deepEqual(after.events.slice(0, 3), events.events, 'the old events keep their ids and order');
      assert.equal(after.events.at(-1)!.type, 'job.completed');
    } finally {
      await server.stop();
    }

    const keys = await docwright(database.env, 'key', 'list', '--project', OLD.projectId, '--json');
    assert.equal(keys.code, 0, keys.stderr);
    assert.deepEqual(
      (JSON.parse(keys.stdout) as { keys: { id: string; name: string }[] }).keys.map((k) => [k.id, k.name]),
      [[OLD.keyId, 'ci']],
    );
    const migrated = await docwright(database.env, 'migrate', '--json');
    assert.deepEqual(JSON.parse(migrated.stdout).applied, [], 'the start applied every migration');
    const store = await openRaw(database);
    try {
      const status = await migrationStatus(store.db, store.dialect, database.schema);
      assert.deepEqual(status.pending, []);
      assert.equal(status.applied[0], '0001_foundation');
      assert.ok(status.applied.length > 1, 'later migrations were applied');
      const stamp = await sql<{ version: string }>`select version from docwright_version`.execute(store.db);
      assert.deepEqual(stamp.rows, [{ version: VERSION }], 'the release that migrated it is recorded');
      const uses = await store.db.selectFrom('rate_limit_uses').select('project_id').execute();
      const counts = await store.db.selectFrom('rate_limit_counts').select(['project_id', 'uses']).execute();
      assert.deepEqual(
        uses,
        [{ project_id: OLD.projectId }],
        "the old use was pruned, the follow-up's stored",
      );
      assert.deepEqual(counts, [{ project_id: OLD.projectId, uses: 1 }]);
    } finally {
      await store.close();
    }
  });

  test('a database migrated by a newer docwright is refused by serve, migrate and the CLI, naming both versions; nothing in it changes', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const migrated = await docwright(database.env, 'migrate', '--json');
    assert.equal(migrated.code, 0, migrated.stderr);
    const store = await openRaw(database);
    try {
      // What a later release would have done: one more migration, and its version recorded.
      await sql`insert into kysely_migration (name, timestamp) values ('0099_future', '2030-01-01T00:00:00.000Z')`.execute(
        store.db,
      );
      await sql`update docwright_version set version = '9.0.0'`.execute(store.db);
    } finally {
      await store.close();
    }
    const before = await snapshot(database);

    const refusal = new RegExp(
      `^docwright: the database .+ was migrated by docwright 9\\.0\\.0, newer than this docwright ${VERSION.replaceAll('.', '\\.')} \\(it has 0099_future, which ${VERSION.replaceAll('.', '\\.')} does not know\\)\\. Nothing in it was changed\\. Run docwright 9\\.0\\.0 or later`,
    );
    for (const args of [['serve', '--port', '0'], ['migrate'], ['project', 'list']]) {
      const result = await docwright(database.env, ...args);
      assert.equal(result.code, 1, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, refusal, args[0]);
      assert.equal(result.stdout, '');
    }
    assert.deepEqual(await snapshot(database), before, 'the database is exactly as it was');
  });
});

/** Everything a refused start could have touched: the SQLite files' bytes, or the schema's tables and rows. */
async function snapshot(database: TestDatabase): Promise<unknown> {
  if (testDialect === 'sqlite') {
    return readdirSync(database.dataDir)
      .sort()
      .map((name) => [
        name,
        createHash('sha256')
          .update(readFileSync(path.join(database.dataDir, name)))
          .digest('hex'),
      ]);
  }
  const store = await openRaw(database);
  try {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = ${database.schema!} order by table_name`.execute(
      store.db,
    );
    const contents: Record<string, unknown[]> = {};
    for (const { table_name } of tables.rows) {
      contents[table_name] = (
        await sql`select * from ${sql.id(table_name)} order by 1`.execute(store.db)
      ).rows;
    }
    return contents;
  } finally {
    await store.close();
  }
}
