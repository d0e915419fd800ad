/**
 * Signals between processes (src/store/signals.ts): on PostgreSQL, what is published while a
 * NOTIFY is under way goes out together in the next statement, and every signal is heard.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { createLogger } from '../../src/logger.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { createSignals, type Signal } from '../../src/store/signals.ts';
import { createTestDatabase, storeOptions, type TestDatabase, testDialect } from '../helpers/database.ts';
import { waitFor } from '../helpers/worker.ts';

describe('PostgreSQL signals', {
  skip: testDialect === 'postgres' ? false : 'NOTIFY is PostgreSQL’s (run with DOCWRIGHT_TEST_DB=postgres)',
}, () => {
  let database: TestDatabase;
  let store: Store;
  before(async () => {
    database = await createTestDatabase();
    // NOTIFY needs no tables.
    store = await openStore({ ...storeOptions(database), migrate: false });
  });
  after(async () => {
    await store.close();
    await database.drop();
  });

  test('signals published at once are sent in a few statements, and each is heard', async () => {
    let statements = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        statements++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const signals = createSignals(
      { ...store, db: store.db.withPlugin(counting) },
      { databaseUrl: database.env.DATABASE_URL, schema: database.schema!, logger: createLogger('silent') },
    );
    const heard = new Map<string, number>();
    const unsubscribe = signals.subscribe((signal: Signal) => {
      if (signal.kind === 'job-event') heard.set(signal.jobId, (heard.get(signal.jobId) ?? 0) + 1);
    });
    try {
      await waitFor(() => signals.listeningSince!() !== undefined, { message: 'the listener connects' });
      assert.equal(await signals.caughtUp!(), true, 'listening');
      const jobIds = Array.from({ length: 50 }, (_, i) => `job_${i}`);
      // Each published twice: the second shares the first's statement or the next one.
      await Promise.all([...jobIds, ...jobIds].map((jobId) => signals.publish({ kind: 'job-event', jobId })));
      assert.equal(await signals.caughtUp!(), true);
      assert.deepEqual([...heard.keys()].sort(), [...jobIds].sort());
      // The first goes at once, alone; everything published while it was under way, in the next.
      assert.equal(statements, 2);

      // Published one after another, each is a statement of its own, and heard.
      await signals.publish({ kind: 'job-event', jobId: 'job_a' });
      await signals.publish({ kind: 'job-event', jobId: 'job_b' });
      assert.equal(await signals.caughtUp!(), true);
      assert.equal(statements, 4);
      assert.deepEqual([heard.get('job_a'), heard.get('job_b')], [1, 1]);
    } finally {
      unsubscribe();
      await signals.close();
    }
  });
});
