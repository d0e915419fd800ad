import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CompiledQuery } from 'kysely';
import { DocwrightError } from '../../src/errors.ts';
import { postgresCreate } from '../../src/jobs/create-postgres.ts';
import type { JobWork } from '../../src/jobs/work-result.ts';
import type { Store } from '../../src/store/database.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';

/**
 * The plain create on PostgreSQL reads the project, then writes in one call of `create_job`
 * (src/jobs/create-postgres.ts). What happens in between must not be lost: these tests change
 * the database between the read and the call.
 */
describe('a plain create on PostgreSQL in one round trip', { skip: testDialect !== 'postgres' }, () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app, { rateLimit: 100 });
  });
  after(() => t.close());

  /**
   * A `postgresCreate` of its own (nothing remembered), counting its round trips; `meanwhile`
   * runs after the first (the read of the project).
   */
  const creator = (meanwhile: () => Promise<void> = async () => {}) => {
    const calls = { count: 0 };
    const store: Store = {
      ...t.app.store,
      prepared: async <R>(query: CompiledQuery) => {
        const rows = await t.app.store.prepared!<R>(query);
        if (calls.count++ === 0) await meanwhile();
        return rows;
      },
    };
    const create = postgresCreate({
      store,
      defaultRateLimit: 100,
      now: () => new Date(),
      publish: async () => {},
      chooseModel: (project, requested) => {
        const allowed = (JSON.parse(project.settings) as { allowedModels?: string[] }).allowedModels ?? [];
        if (requested !== undefined && !allowed.includes(requested))
          throw new DocwrightError('invalid-request', 'model is not allowed');
        return requested ?? project.model ?? '';
      },
    });
    return {
      calls,
      /** The create, made by the one-round-trip call (not handed back for the ordinary way). */
      create: async (body = {}): Promise<JobWork> => {
        const result = await create(p.projectId, { prompt: 'Document the export command', ...body });
        assert.ok(result, 'the create is made in one call');
        return result;
      },
    };
  };
  const createWith = (meanwhile: () => Promise<void>) => creator(meanwhile).create();
  const setProject = async (values: { ref?: string; settings?: string; rate_limit?: number }) => {
    await t.app.store.db.updateTable('projects').set(values).where('id', '=', p.projectId).execute();
  };
  const refOf = (result: JobWork) => result.job.source.ref;

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

  test('a project changed between the read and the lock: the call writes nothing, and the create is made from the project as it now is', async () => {
    const [jobs, uses] = [await count('jobs'), await count('rate_limit_uses')];
    const result = await createWith(() => setProject({ ref: 'release' }));
    assert.equal(refOf(result), 'release');
    // One job and one use: the stale call wrote nothing.
    assert.deepEqual([await count('jobs'), await count('rate_limit_uses')], [jobs + 1, uses + 1]);
    await setProject({ ref: 'main' });
  });

  test('a remembered project costs no read; one changed since is read again, and a model allowed since is allowed', async () => {
    const { calls, create } = creator();
    await create();
    assert.equal(calls.count, 2, 'the first create reads the project');
    await create();
    assert.equal(calls.count, 3, 'the next one is one round trip');
    await setProject({ ref: 'release' });
    assert.equal(refOf(await create()), 'release');
    assert.equal(calls.count, 6, 'stale call, read, call');
    await setProject({ ref: 'main', settings: JSON.stringify({ allowedModels: ['openai/gpt-bench'] }) });
    const chosen = await create({ model: 'openai/gpt-bench' });
    assert.equal(chosen.job.model, 'openai/gpt-bench');
    await assert.rejects(create({ model: 'openai/other' }), /not allowed/);
    await setProject({ settings: '{}' });
  });

  test('the remembered project: after its model changes, the next job has the new model', async () => {
    const own = await seedProject(t.app, { model: 'openai/gpt-before', rateLimit: 100 });
    const create = async () =>
      (await t.app.jobs.create(own.projectId, { prompt: 'Document the export command' })).job;
    assert.equal((await create()).model, 'openai/gpt-before');
    // Remembered now: the next create is the one-round-trip call on what this process read.
    assert.equal((await create()).model, 'openai/gpt-before');
    await t.app.projects.update(own.projectId, { model: 'openai/gpt-after' });
    assert.equal((await create()).model, 'openai/gpt-after');
    // Changed behind this process's back (another process, or SQL by hand): the same.
    await t.app.store.db
      .updateTable('projects')
      .set({ model: 'openai/gpt-elsewhere' })
      .where('id', '=', own.projectId)
      .execute();
    assert.equal((await create()).model, 'openai/gpt-elsewhere');
    const models = await t.app.store.db
      .selectFrom('jobs')
      .select('model')
      .where('project_id', '=', own.projectId)
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      models.map((m) => m.model),
      ['openai/gpt-before', 'openai/gpt-before', 'openai/gpt-after', 'openai/gpt-elsewhere'],
    );
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
    assert.equal(result.created, true);
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
    assert.equal(result.created, true);
    const jobId = result.job.id;
    const message = await t.app.store.db
      .selectFrom('webhook_messages')
      .selectAll()
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    assert.equal(message.type, 'job.created');
    const payload: { data: { id: string } } = JSON.parse(message.body);
    assert.equal(payload.data.id, jobId);
    assert.deepEqual(
      [await count('webhook_messages'), await count('webhook_deliveries')],
      [messages + 1, deliveries + 1],
    );
  });

  test('the last use of the window: one more is refused with the reset time, and nothing is written', async () => {
    const used = await count('rate_limit_uses');
    await setProject({ rate_limit: used });
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
