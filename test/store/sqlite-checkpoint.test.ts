/**
 * SQLite's write-ahead log is copied into the database by a thread of its own, never by the
 * connection that serves requests: an automatic checkpoint ran inside whichever commit crossed
 * the threshold and held the event loop for as long as copying and syncing took.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { appendEvents } from '../../src/jobs/events.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';

const onlySqlite =
  testDialect === 'sqlite' ? false : 'skipped: SQLite checkpoints (run with DOCWRIGHT_TEST_DB=sqlite)';

describe('SQLite checkpoints off the event loop', { skip: onlySqlite }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('commits never checkpoint; the checkpoint thread empties the log in the background', async () => {
    const p = await seedProject(t.app);
    const jobId = ((await t.app.jobs.create(p.projectId, { prompt: 'x' })).body as { id: string }).id;
    const file = path.join(t.database.dataDir, 'docwright.db');
    // 40 MB of transcript through the app's own connection, commit after commit.
    const chunk = 'x'.repeat(10 * 1024);
    for (let i = 0; i < 40; i++) {
      await appendEvents(
        t.app.store.db,
        Array.from({ length: 100 }, () => ({ jobId, type: 'agent.text', data: { text: chunk } })),
        new Date(),
      );
    }
    // With automatic checkpoints, some of these commits copied and synced ~16 MB each.
    const { rows } = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(
      t.app.store.db,
    );
    assert.equal(rows[0]!.wal_autocheckpoint, 0, 'the serving connection never checkpoints');
    // Until checkpointed, the pages live in the log, not in the database file; the thread copies
    // them over within a few of its one-second ticks.
    let size = statSync(file).size;
    for (let i = 0; i < 50 && size < 30 * 1024 * 1024; i++) {
      await new Promise((r) => setTimeout(r, 200));
      size = statSync(file).size;
    }
    assert.ok(size >= 30 * 1024 * 1024, `the database file holds ${size} bytes`);
  });
});
