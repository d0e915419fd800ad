// `"mode": "ask"` on the v2 create body (docs/questions.mdx): validated like every field, stored
// and shown on the AgentJob, counted against the rate limit like any create, and kept by follow-ups.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

describe('mode on the v2 create body', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const create = (projectId: string, key: string, payload: unknown) =>
    t.server.inject({
      method: 'POST',
      url: `/v2/agent/${projectId}/job`,
      headers: bearer(key),
      payload: payload as Record<string, unknown>,
    });

  test('an unknown or mistyped mode is a 400 naming the field; edit is the default', async () => {
    const p = await seedProject(t.app);
    for (const mode of ['question', 'ASK', 1, null]) {
      const res = await create(p.projectId, p.key, { prompt: 'Where is the limit documented?', mode });
      assert.equal(res.statusCode, 400, String(mode));
      const problem = res.json();
      assert.equal(problem.code, 'invalid-request');
      assert.deepEqual(
        problem.errors.map((e: { field: string }) => e.field),
        ['mode'],
      );
      assert.match(problem.errors[0].message, /must be one of: edit, ask/);
    }
    const plain = await create(p.projectId, p.key, { prompt: 'Document the limit' });
    assert.equal(plain.statusCode, 201);
    assert.equal(plain.json().mode, 'edit');
    assert.equal(plain.json().answer, null);
    assert.deepEqual(plain.json().citations, []);
    const edit = await create(p.projectId, p.key, { prompt: 'Document the limit', mode: 'edit' });
    assert.equal(edit.json().mode, 'edit');
  });

  test('an ask is stored with its mode, listed with it, and counts against the rate limit', async () => {
    const p = await seedProject(t.app, { rateLimit: 2 });
    const first = await create(p.projectId, p.key, { prompt: 'How many jobs per hour?', mode: 'ask' });
    assert.equal(first.statusCode, 201);
    assert.equal(first.json().mode, 'ask');
    assert.equal(first.headers.ratelimit, '"create";r=1;t=3600');
    const row = await t.app.store.db
      .selectFrom('jobs')
      .select(['mode', 'answer', 'citations'])
      .where('id', '=', first.json().id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { mode: 'ask', answer: null, citations: '[]' });
    const created = await t.app.store.db
      .selectFrom('job_events')
      .select('data')
      .where('job_id', '=', first.json().id)
      .where('type', '=', 'job.created')
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(created.data).mode, 'ask');

    const second = await create(p.projectId, p.key, { prompt: 'And per key?', mode: 'ask' });
    assert.equal(second.headers.ratelimit, '"create";r=0;t=3600');
    const third = await create(p.projectId, p.key, { prompt: 'Still there?', mode: 'ask' });
    assert.equal(third.statusCode, 429);
    assert.equal(third.json().code, 'rate-limited');

    const listed = await t.server.inject({
      method: 'GET',
      url: `/v2/agent/${p.projectId}/jobs`,
      headers: bearer(p.key),
    });
    assert.deepEqual(
      listed.json().jobs.map((j: { mode: string }) => j.mode),
      ['ask', 'ask'],
    );
  });

  test('a follow-up message takes no mode of its own: the job keeps the one it was created with', async () => {
    const p = await seedProject(t.app);
    const job = (await create(p.projectId, p.key, { prompt: 'Is there a limit?', mode: 'ask' })).json();
    await t.app.store.db.updateTable('jobs').set({ status: 'completed' }).where('id', '=', job.id).execute();
    const message = (payload: Record<string, unknown>) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${p.projectId}/job/${job.id}/message`,
        headers: bearer(p.key),
        payload,
      });
    const refused = await message({ prompt: 'Change it', mode: 'edit' });
    assert.equal(refused.statusCode, 400);
    assert.deepEqual(
      refused.json().errors.map((e: { field: string }) => e.field),
      ['mode'],
    );
    const followUp = await message({ prompt: 'Per key?' });
    assert.equal(followUp.statusCode, 200);
    assert.equal(followUp.json().mode, 'ask');
  });
});
