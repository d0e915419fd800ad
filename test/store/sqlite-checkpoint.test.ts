/**
 * SQLite's write-ahead log is copied into the database by a thread of its own, never by the
 * connection that serves requests: an automatic checkpoint ran inside whichever commit crossed
 * the threshold and held the event loop for as long as copying and syncing took.
 */
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { appendEvents } from '../../src/jobs/events.ts';
import { NodeSqliteDialect } from '../../src/store/sqlite-dialect.ts';
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
    const jobId = (await t.app.jobs.create(p.projectId, { prompt: 'x' })).job.id;
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

describe('SQLite write-ahead log under writes that never pause', { skip: onlySqlite }, () => {
  test('the log is started over once past its limit, instead of growing by every page written', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docwright-wal-'));
    const limit = 512 * 1024;
    // biome-ignore lint/suspicious/noExplicitAny: a table of this test's own
    const db = new Kysely<any>({
      dialect: new NodeSqliteDialect(path.join(dir, 'wal.db'), { walLimitBytes: limit }),
    });
    try {
      await sql`create table item (n integer primary key, body text not null)`.execute(db);
      const wal = path.join(dir, 'wal.db-wal');
      // Each start over counts up the checkpoint sequence number in the log's header.
      const sequence = () => {
        const fd = openSync(wal, 'r');
        try {
          const header = Buffer.alloc(16);
          readSync(fd, header, 0, 16, 0);
          return header.readUInt32BE(12);
        } finally {
          closeSync(fd);
        }
      };
      const body = 'x'.repeat(2000);
      let written = 0;
      let restarts = 0;
      let last = -1;
      // Transactions back to back, as the server's group commit runs them under load, until the
      // log has started over twice (a tick of the checkpoint thread is a second).
      for (const end = Date.now() + 30_000; restarts < 2 && Date.now() < end; ) {
        await db.transaction().execute(async (trx) => {
          for (let i = 0; i < 20; i++) await sql`insert into item (body) values (${body})`.execute(trx);
        });
        written += 20 * body.length;
        const now = sequence();
        if (last !== -1 && now !== last) {
          restarts++;
          // The file is reused, and truncated only once past twice the limit.
          const size = statSync(wal).size;
          assert.ok(size <= 2 * limit + 64 * 1024, `started over, the log's file is ${size} bytes`);
        }
        last = now;
      }
      assert.equal(
        restarts,
        2,
        `the log never started over: ${statSync(wal).size} bytes after ${written} written`,
      );
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
