import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { type App, openApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { DocwrightError } from '../../src/errors.ts';
import { createLogger } from '../../src/logger.ts';
import { startPostgresProxy } from '../doubles/postgres-proxy.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_POSTGRES_URL, testDialect } from '../helpers/database.ts';
import { runCli, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const rejected = async (app: App, key: string): Promise<string | undefined> =>
  app.keys.authenticate(key).then(
    () => undefined,
    (error: unknown) => (error instanceof DocwrightError ? error.message : String(error)),
  );

/**
 * Marks a key revoked behind docwright's back (SQL by hand) and unannounced: only a key looked up
 * again sees it. On PostgreSQL the database announces a revocation itself (migration 0014), so the
 * statement runs with triggers switched off (`session_replication_role = replica`), which is what
 * makes it unannounced: a probe of whether an answer came from the cache.
 */
const revokeBySql = (app: App, keyId: string) =>
  app.store.db.transaction().execute(async (trx) => {
    if (app.store.dialect === 'postgres')
      await sql`set local session_replication_role = replica`.execute(trx);
    await sql`update api_keys set revoked_at = ${new Date().toISOString()} where id = ${keyId}`.execute(trx);
  });

describe(`verified-key cache (${testDialect})`, () => {
  let t: TestApp;
  /** A second app on the same database: another process, as far as the cache can tell. */
  let other: App;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    other = await openApp(loadConfig({ ...t.database.env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
      migrate: false,
    });
    p = await seedProject(t.app);
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  /** Authenticates until the cache holds the key, which a change nobody announces then cannot reach. */
  async function cached(app: App, keyId: string, key: string) {
    if (testDialect === 'postgres') {
      // The cache is trusted only once the process listens for revocations.
      await waitFor(async () => app.signals.listeningSince?.() !== undefined || undefined, {
        timeoutMs: 5000,
      });
    }
    await app.keys.authenticate(key);
    return keyId;
  }

  test('the cache answers for a verified key: a change nobody announced is not seen', async () => {
    const k = await t.app.keys.create(p.projectId);
    await cached(t.app, k.id, k.key);
    // Same connection on SQLite (data_version unchanged), no signal on PostgreSQL: the cache answers.
    await revokeBySql(t.app, k.id);
    assert.deepEqual(await t.app.keys.authenticate(k.key), { keyId: k.id, projectId: p.projectId });
  });

  test('a job poll sees a revocation by SQL by hand at once (the database announces it on PostgreSQL)', async () => {
    const k = await t.app.keys.create(p.projectId);
    await cached(t.app, k.id, k.key);
    const { job } = await t.app.jobs.create(p.projectId, { prompt: 'Document the flag' });
    const poll = () =>
      t.server.inject({
        method: 'GET',
        url: `/v2/agent/${p.projectId}/job/${job.id}`,
        headers: bearer(k.key),
      });
    assert.equal((await poll()).statusCode, 200);
    // On SQLite a poll whose process wrote reads again; on PostgreSQL a poll answered from memory
    // is forgotten by the database's announcement (migration 0014), which this statement makes.
    await sql`update api_keys set revoked_at = ${new Date().toISOString()} where id = ${k.id}`.execute(
      t.app.store.db,
    );
    const res = await poll();
    assert.equal(res.statusCode, 401);
    assert.match(res.json<{ detail: string }>().detail, /revoked/);
  });

  test('a revocation in this process is seen at once', async () => {
    const k = await t.app.keys.create(p.projectId);
    await cached(t.app, k.id, k.key);
    await t.app.keys.revoke(k.id);
    assert.equal(await rejected(t.app, k.key), 'the API key has been revoked');
    const res = await t.server.inject({
      method: 'GET',
      url: `/v2/agent/${p.projectId}/jobs`,
      headers: bearer(k.key),
    });
    assert.equal(res.statusCode, 401);
  });

  test('a revocation by another process (connection) is seen by the next request', async () => {
    const k = await t.app.keys.create(p.projectId);
    await cached(t.app, k.id, k.key);
    // SQLite: the other connection's commit changes data_version, read on every request.
    // PostgreSQL: the cache is trusted only once the listener has caught up with the request.
    await other.keys.revoke(k.id);
    assert.equal(await rejected(t.app, k.key), 'the API key has been revoked');
    // A key that is still valid is answered as before (and cached again).
    assert.equal(await rejected(t.app, p.key), undefined);
  });

  test('PostgreSQL: while the process does not listen for revocations, nothing is trusted', {
    skip: testDialect !== 'postgres' && 'PostgreSQL only',
  }, async () => {
    const k = await t.app.keys.create(p.projectId);
    await cached(t.app, k.id, k.key);
    // Cut the listening connection (a failover, a restarted database).
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    try {
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'docwright-listen' and query like 'LISTEN "docwright_${t.database.schema}"%'`,
      );
    } finally {
      await admin.end();
    }
    await waitFor(async () => t.app.signals.listeningSince?.() === undefined || undefined, {
      timeoutMs: 5000,
    });
    // Verified while not listening: not cached, so a revocation whose signal is missed is still seen.
    assert.equal(await rejected(t.app, k.key), undefined);
    await revokeBySql(other, k.id);
    assert.equal(await rejected(t.app, k.key), 'the API key has been revoked');
    // Listening again; what was cached before is not trusted (signals may have been missed).
    await waitFor(async () => t.app.signals.listeningSince?.() !== undefined || undefined, {
      timeoutMs: 5000,
    });
    const k2 = await t.app.keys.create(p.projectId);
    await cached(t.app, k2.id, k2.key);
    await revokeBySql(t.app, k2.id);
    assert.equal(await rejected(t.app, k2.key), undefined, 'cached again once listening');
  });
});

describe(`key revocation across real processes (${testDialect})`, () => {
  test('a key revoked with the CLI is refused by a running server on its next request', async () => {
    const t = await startTestApp();
    const p = await seedProject(t.app);
    await t.app.close();
    const server = await startServerProcess(t.database.env);
    try {
      const get = () => fetch(`${server.url}/v2/agent/${p.projectId}/jobs`, { headers: bearer(p.key) });
      // Warm the server's cache.
      for (let i = 0; i < 3; i++) assert.equal((await get()).status, 200);
      const revoked = await runCli(['key', 'revoke', p.keyId, '--json'], t.database.env);
      assert.equal(revoked.code, 0, revoked.stderr);
      const after = await get();
      assert.equal(after.status, 401);
      assert.match(((await after.json()) as { detail: string }).detail, /revoked/);
    } finally {
      await server.stop();
      await t.database.drop();
    }
  });
});

describe('key revocation across processes on PostgreSQL', {
  skip: testDialect !== 'postgres' && 'PostgreSQL only',
}, () => {
  test('a key revoked by one process is refused by another at once, even before the other has heard of it', async () => {
    const t = await startTestApp();
    const p = await seedProject(t.app);
    // The server's connections go through a proxy that can hold back what its listener hears.
    const proxy = await startPostgresProxy(TEST_POSTGRES_URL);
    const server = await startServerProcess({ ...t.database.env, DATABASE_URL: proxy.url }, ['--no-worker']);
    try {
      const get = (key: string) =>
        fetch(`${server.url}/v2/agent/${p.projectId}/jobs`, { headers: bearer(key) });
      await waitFor(() => proxy.listeners() > 0, { message: 'the server listens for signals' });
      // The server answers from its verified-key cache: a revocation nobody announced is not seen.
      await waitFor(
        async () => {
          const probe = await t.app.keys.create(p.projectId);
          assert.equal((await get(probe.key)).status, 200);
          await revokeBySql(t.app, probe.id);
          return (await get(probe.key)).status === 200;
        },
        { message: 'the server caches verified keys' },
      );
      const k = await t.app.keys.create(p.projectId);
      assert.equal((await get(k.key)).status, 200);

      // The server's listener hears nothing for now (a busy database, a slow network).
      proxy.holdListeners();
      await t.app.keys.revoke(k.id);
      const after = await get(k.key);
      assert.equal(after.status, 401, 'a request after the revocation is as current as a read');
      assert.match(((await after.json()) as { detail: string }).detail, /revoked/);
      assert.equal((await get(p.key)).status, 200, 'valid keys are still served meanwhile');

      proxy.release();
      assert.equal((await get(k.key)).status, 401);
      assert.equal((await get(p.key)).status, 200);
    } finally {
      await server.stop();
      await proxy.close();
      await t.close();
      rmSync(p.repository, { recursive: true, force: true });
    }
  });
});
