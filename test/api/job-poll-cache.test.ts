/**
 * Job polls (GET job) answered from memory while the database provably has not changed
 * (src/api/job-poll-cache.ts): an answer from memory must be exactly as current as a read.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type App, openApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { JobPollCache } from '../../src/jobs/job-poll-cache.ts';
import { createLogger } from '../../src/logger.ts';
import type { ApiKeyRow } from '../../src/store/schema.ts';
import {
  bearer,
  type SeededProject,
  seedProject,
  startTestApp,
  type TestApp,
  tampered,
} from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { runCli, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

describe(`job polls answered from memory (${testDialect})`, () => {
  let t: TestApp;
  /** A second app on the same database: another process, as far as the server can tell. */
  let other: App;
  let p: SeededProject;
  let jobId: string;
  let clock: number;
  /** How many hot reads the server's store ran. */
  let reads: number;

  before(async () => {
    t = await startTestApp({ now: () => new Date(clock) });
    other = await openApp(loadConfig({ ...t.database.env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
      migrate: false,
    });
    const read = t.app.store.read.bind(t.app.store);
    t.app.store.read = (query) => {
      reads++;
      return read(query);
    };
  });
  after(async () => {
    await other.close();
    await t.close();
  });
  beforeEach(async () => {
    clock = Date.parse('2026-11-24T12:00:00Z');
    p = await seedProject(t.app);
    jobId = (await t.app.jobs.create(p.projectId, { prompt: 'Document the flag' })).job.id;
    reads = 0;
  });

  const poll = async (key = p.key) => {
    const res = await t.server.inject({
      method: 'GET',
      url: `/v2/agent/${p.projectId}/job/${jobId}`,
      headers: bearer(key),
    });
    return { status: res.statusCode, body: res.json<{ status: string; detail?: string }>(), res };
  };

  test('a repeated poll with nothing changed reads nothing', async () => {
    // PostgreSQL remembers answers only while it listens for the database's announcements.
    if (testDialect === 'postgres') {
      await waitFor(async () => t.app.signals.listeningSince?.() !== undefined || undefined, {
        timeoutMs: 5000,
      });
    }
    const first = await poll();
    assert.equal(first.status, 200);
    for (let i = 0; i < 5; i++) {
      const again = await poll();
      assert.equal(again.status, 200);
      assert.equal(again.res.body, first.res.body);
      assert.equal(again.res.headers['content-type'], 'application/json; charset=utf-8');
    }
    // The first poll recorded the key's use (a write), so the second read again.
    assert.equal(reads, 2);
  });

  test('a change made by this process is answered at once', async () => {
    assert.equal((await poll()).body.status, 'active');
    await poll();
    await t.app.jobs.archive(p.projectId, jobId);
    assert.equal((await poll()).body.status, 'archived');
  });

  test('a change behind the services’ back (SQL by hand on the same connection) is answered at once', async () => {
    await poll();
    await poll();
    await sql`update jobs set status = 'failed' where id = ${jobId}`.execute(t.app.store.db);
    assert.equal((await poll()).body.status, 'failed');
  });

  test('a change committed by another process is answered at once', async () => {
    await poll();
    await poll();
    await other.jobs.archive(p.projectId, jobId);
    assert.equal((await poll()).body.status, 'archived');
  });

  test('PostgreSQL: an answer read while an announcement arrived is not remembered', {
    skip: testDialect !== 'postgres' && 'PostgreSQL only: SQLite remembers by the file’s change counter',
  }, async () => {
    await waitFor(async () => t.app.signals.listeningSince?.() !== undefined || undefined, {
      timeoutMs: 5000,
    });
    await poll();
    await poll();
    await t.app.jobs.archive(p.projectId, jobId);
    const findWithKey = t.app.jobs.findWithKey;
    t.app.jobs.findWithKey = async (...args) => {
      const found = await findWithKey(...args);
      t.app.jobs.findWithKey = findWithKey;
      // Another process changes the job just after this read's snapshot, and its announcement is
      // heard before the answer would be kept: it found nothing to forget.
      await sql`update jobs set status = 'failed' where id = ${jobId}`.execute(other.store.db);
      assert.equal(await t.app.signals.caughtUp?.(), true);
      return found;
    };
    try {
      assert.equal((await poll()).body.status, 'archived', 'the answer of the read’s snapshot');
    } finally {
      t.app.jobs.findWithKey = findWithKey;
    }
    assert.equal((await poll()).body.status, 'failed', 'not answered from the stale read');
  });

  test('a key revoked by another process is refused by the next poll', async () => {
    await poll();
    assert.equal((await poll()).status, 200);
    await other.keys.revoke(p.keyId);
    const refused = await poll();
    assert.equal(refused.status, 401);
    assert.match(refused.body.detail!, /revoked/);
  });

  test('a key that expires while its answer is remembered is refused once it has expired', async () => {
    const k = await t.app.keys.create(p.projectId, { expiresAt: new Date(clock + 30_000) });
    await poll(k.key);
    assert.equal((await poll(k.key)).status, 200);
    // Within the minute of its recorded use: only the expiry can refuse it.
    clock += 30_000;
    const refused = await poll(k.key);
    assert.equal(refused.status, 401);
    assert.match(refused.body.detail!, /expired/);
  });

  test('a key polling from memory still has its use recorded, to the minute', async () => {
    const lastUsed = async () =>
      (await t.app.keys.list(p.projectId)).find((k) => k.id === p.keyId)?.lastUsedAt ?? null;
    await poll();
    await poll();
    assert.equal(await lastUsed(), new Date(clock).toISOString());
    clock += 30_000;
    await poll();
    assert.equal(await lastUsed(), new Date(clock - 30_000).toISOString(), 'within the minute: not written');
    clock += 60_000;
    await poll();
    assert.equal(await lastUsed(), new Date(clock).toISOString());
  });

  test('an answer is the key’s own: another project’s key, a wrong key and another job are not answered from it', async () => {
    const stranger = await seedProject(t.app);
    await poll();
    await poll();
    // Asked before any write (the stranger key's first use is recorded), which would forget the answer.
    const elsewhere = await t.server.inject({
      method: 'GET',
      url: `/v2/agent/${stranger.projectId}/job/${jobId}`,
      headers: bearer(p.key),
    });
    assert.equal(elsewhere.statusCode, 403, 'the same key and job under another project’s path');
    assert.equal((await poll(tampered(p.key))).status, 401);
    assert.equal((await poll(stranger.key)).status, 403);
    const otherJob = await t.server.inject({
      method: 'GET',
      url: `/v2/agent/${p.projectId}/job/job_01kaw3w3w3w3w3w3w3w3w3w3w3`,
      headers: bearer(p.key),
    });
    assert.equal(otherJob.statusCode, 404);
  });
});

describe(`job polls across real processes (${testDialect})`, () => {
  let t: TestApp;
  let p: SeededProject;
  let jobId: string;
  let servers: Awaited<ReturnType<typeof startServerProcess>>[];

  beforeEach(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
    jobId = (await t.app.jobs.create(p.projectId, { prompt: 'Document the flag' })).job.id;
    await t.app.close();
    servers = [];
  });
  afterEach(async () => {
    for (const server of servers) await server.stop();
    await t.database.drop();
  });

  const poll = (url: string) =>
    fetch(`${url}/v2/agent/${p.projectId}/job/${jobId}`, { headers: bearer(p.key) });

  test('an API node answers a change made through another node at once', async () => {
    const a = await startServerProcess(t.database.env, ['--no-worker']);
    servers.push(a);
    const b = await startServerProcess(t.database.env, ['--no-worker']);
    servers.push(b);
    for (let i = 0; i < 3; i++)
      assert.equal(((await (await poll(a.url)).json()) as { status: string }).status, 'active');
    const archived = await fetch(`${b.url}/v2/agent/${p.projectId}/job/${jobId}/archive`, {
      method: 'POST',
      headers: bearer(p.key),
    });
    assert.equal(archived.status, 200);
    assert.equal(((await (await poll(a.url)).json()) as { status: string }).status, 'archived');
  });

  test('a key revoked with the CLI is refused by a polling server’s next poll', async () => {
    const server = await startServerProcess(t.database.env, ['--no-worker']);
    servers.push(server);
    for (let i = 0; i < 3; i++) assert.equal((await poll(server.url)).status, 200);
    const revoked = await runCli(['key', 'revoke', p.keyId, '--json'], t.database.env);
    assert.equal(revoked.code, 0, revoked.stderr);
    const refused = await poll(server.url);
    assert.equal(refused.status, 401);
    assert.match(((await refused.json()) as { detail: string }).detail, /revoked/);
  });
});

const at = new Date('2026-11-24T12:00:00Z');
const keyRow = (id: string): ApiKeyRow => ({
  id,
  project_id: 'prj_1',
  name: null,
  hash: `hash-${id}`,
  last_four: 'abcd',
  created_at: at.toISOString(),
  expires_at: null,
  revoked_at: null,
  last_used_at: at.toISOString(),
});

test('the poll cache forgets its oldest answers past its limits', async () => {
  const cache = new JobPollCache({ changes: () => 'unchanged' }, { maxEntries: 3, maxChars: 100 });
  const token = await cache.token();
  const remember = (job: string, body: string) => cache.set(token, 'hash', job, keyRow('k'), body);
  const remembered = (job: string) => cache.get(token, 'hash', 'prj_1', job, at)?.body;

  for (const job of ['a', 'b', 'c', 'd']) remember(job, job.repeat(10));
  assert.deepEqual(['a', 'b', 'c', 'd'].map(remembered), [
    undefined,
    'b'.repeat(10),
    'c'.repeat(10),
    'd'.repeat(10),
  ]);
  remember('e', 'e'.repeat(90));
  assert.deepEqual(
    ['b', 'c', 'd', 'e'].map(remembered),
    [undefined, undefined, 'd'.repeat(10), 'e'.repeat(90)],
    'the oldest go until 100 characters are enough',
  );
  remember('f', 'f'.repeat(101));
  assert.equal(remembered('f'), undefined, 'an answer larger than the whole cache is not kept');
  remember('e', 'e'.repeat(20));
  remember('g', 'g'.repeat(70));
  assert.deepEqual(
    ['e', 'g'].map(remembered),
    ['e'.repeat(20), 'g'.repeat(70)],
    'a replaced answer counts once',
  );
});

test('the polls of one turn share one reading of the token, taken after all of them were received', async () => {
  let version = 1;
  let readings = 0;
  const cache = new JobPollCache({
    changes: () => {
      readings++;
      return String(version);
    },
  });
  const first = cache.token();
  const second = cache.token();
  // A commit after both polls arrived, but before their turn ends: both must see it.
  version = 2;
  assert.deepEqual(await Promise.all([first, second]), ['2', '2']);
  assert.equal(readings, 1, 'one reading for the turn');
  cache.set('2', 'hash', 'job_a', keyRow('k'), '{"status":"active"}');
  assert.equal(cache.get('2', 'hash', 'prj_1', 'job_a', at)?.body, '{"status":"active"}');

  version = 3;
  const next = await cache.token();
  assert.equal(next, '3');
  assert.equal(readings, 2, 'a later turn reads again');
  assert.equal(cache.get(next, 'hash', 'prj_1', 'job_a', at), undefined, 'a new token forgets the answers');
  cache.set('2', 'hash', 'job_a', keyRow('k'), '{"status":"stale"}');
  assert.equal(
    cache.get('2', 'hash', 'prj_1', 'job_a', at),
    undefined,
    'an answer under a replaced token is not kept',
  );
});
