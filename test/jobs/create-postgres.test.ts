import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CompiledQuery } from 'kysely';
import { postgresCreate } from '../../src/jobs/create-postgres.ts';
import type { Store } from '../../src/store/database.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';

/**
 * The plain create on PostgreSQL reads the project, then writes in one call of `create_job`
 * (src/jobs/create-postgres.ts). What happens in between must not be lost: these tests change
 * the database between the read and the call.
 */
describe('a plain create on PostgreSQL in two round trips', { skip: testDialect !== 'postgres' }, () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app, { rateLimit: 100 });
  });
  after(() => t.close());

  /** `postgresCreate` whose first round trip (the read) is followed by `meanwhile`. */
  const createWith = (meanwhile: () => Promise<void>) => {
    let reads = 0;
    const store: Store = {
      ...t.app.store,
      prepared: async <R>(query: CompiledQuery) => {
        const rows = await t.app.store.prepared!<R>(query);
        if (reads++ === 0) await meanwhile();
        return rows;
      },
    };
    const create = postgresCreate({
      store,
      defaultRateLimit: 100,
      now: () => new Date(),
      publish: async () => {},
      chooseModel: (project) => project.model ?? '',
    });
    return create(p.projectId, { prompt: 'Document the export command' });
  };
  const count = async (table: 'jobs' | 'rate_limit_uses' | 'webhook_messages' | 'webhook_deliveries') =>
    Number(
      (
        await t.app.store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', p.projectId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('a project changed between the read and the lock: nothing is written, the ordinary way takes over', async () => {
    const [jobs, uses] = [await count('jobs'), await count('rate_limit_uses')];
    const result = await createWith(async () => {
      await t.app.store.db
        .updateTable('projects')
        .set({ ref: 'release' })
        .where('id', '=', p.projectId)
        .execute();
    });
    assert.equal(result, undefined);
    assert.deepEqual([await count('jobs'), await count('rate_limit_uses')], [jobs, uses]);
    // The ordinary way sees the new ref.
    const created = await t.app.jobs.create(p.projectId, { prompt: 'Document the export command' });
    assert.equal((created.body as { source: { ref: string } }).source.ref, 'release');
  });

  test('a webhook endpoint disabled between the read and the call gets no delivery, and no message is left', async () => {
    const endpoint = await t.app.webhooks.createEndpoint(
      p.projectId,
      { url: 'https://hooks.example.com/docwright', events: ['job.created'] },
      { allowPrivate: true },
    );
    const [messages, deliveries] = [await count('webhook_messages'), await count('webhook_deliveries')];
    const result = await createWith(async () => {
      await t.app.store.db
        .updateTable('webhook_endpoints')
        .set({ disabled_at: new Date().toISOString() })
        .where('id', '=', endpoint.id)
        .execute();
    });
    assert.equal(result?.statusCode, 201);
    assert.deepEqual(
      [await count('webhook_messages'), await count('webhook_deliveries')],
      [messages, deliveries],
    );
  });

  test('an enabled endpoint gets the message and its delivery in the job’s transaction', async () => {
    const [messages, deliveries] = [await count('webhook_messages'), await count('webhook_deliveries')];
    await t.app.webhooks.createEndpoint(
      p.projectId,
      { url: 'https://hooks.example.com/docwright-2', events: ['job.created'] },
      { allowPrivate: true },
    );
    const result = await createWith(async () => {});
    assert.equal(result?.statusCode, 201);
    const jobId = (result!.body as { id: string }).id;
    const message = await t.app.store.db
      .selectFrom('webhook_messages')
      .selectAll()
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    assert.equal(message.type, 'job.created');
    assert.equal((JSON.parse(message.body) as { data: { id: string } }).data.id, jobId);
    assert.deepEqual(
      [await count('webhook_messages'), await count('webhook_deliveries')],
      [messages + 1, deliveries + 1],
    );
  });

  test('the last use of the window: one more is refused with the reset time, and nothing is written', async () => {
    const used = await count('rate_limit_uses');
    await t.app.store.db
      .updateTable('projects')
      .set({ rate_limit: used })
      .where('id', '=', p.projectId)
      .execute();
    const jobs = await count('jobs');
    await assert.rejects(
      createWith(async () => {}),
      (error: Error & { code?: string; rateLimit?: { remaining: number; resetSeconds: number } }) => {
        assert.equal(error.code, 'rate-limited');
        assert.equal(error.rateLimit?.remaining, 0);
        assert.ok((error.rateLimit?.resetSeconds ?? 0) > 0);
        return true;
      },
    );
    assert.equal(await count('jobs'), jobs);
  });
});
