/**
 * Another process holding SQLite's write lock (a CLI command, a second server) must not freeze
 * the server's event loop (issue 9, finding 10): writes wait asynchronously, everything else
 * keeps answering, and the waiting write succeeds once the lock is free.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';

const onlySqlite =
  testDialect === 'sqlite' ? false : 'skipped: a SQLite file lock (run with DOCWRIGHT_TEST_DB=sqlite)';

describe('SQLite write lock held by another process', { skip: onlySqlite }, () => {
  let t: TestApp;
  let p: SeededProject;
  let server: ServerProcess;

  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
    server = await startServerProcess(t.database.env, ['--no-worker']);
  });
  after(async () => {
    await server.stop('SIGKILL');
    await t.close();
  });

  test('health answers at once while a create waits for the lock; the create then succeeds', async () => {
    const other = new DatabaseSync(path.join(t.database.dataDir, 'docwright.db'));
    // The server may be writing (its one-time setup link) just after it answered ready: wait for it.
    for (let attempt = 0; ; attempt++) {
      try {
        other.exec('BEGIN IMMEDIATE');
        break;
      } catch (error) {
        if (attempt === 100) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    let released = false;
    const release = setTimeout(() => {
      other.exec('COMMIT');
      released = true;
    }, 2_000);
    try {
      const create = fetch(`${server.url}/v2/agent/${p.projectId}/job`, {
        method: 'POST',
        headers: { ...bearer(p.key), 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'While locked' }),
      });
      // Let the create reach the database and start waiting.
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const health = await fetch(`${server.url}/healthz`);
        assert.equal(health.status, 200);
        // A liveness bound: with SQLite's own busy wait this took until the lock was freed.
        assert.ok(performance.now() - started < 500, `healthz took ${performance.now() - started} ms`);
        assert.equal(released, false, 'the lock is still held');
      }
      const created = await create;
      assert.equal(created.status, 201);
      assert.equal(released, true, 'the create finished only after the lock was released');
    } finally {
      clearTimeout(release);
      if (!released) other.exec('ROLLBACK');
      other.close();
    }
  });
});
