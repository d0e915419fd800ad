import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { requestFingerprint } from '../../src/jobs/idempotency.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * An `Idempotency-Key` remembers the work its first request did (src/jobs/idempotency.ts) and the
 * route answers a replay from it as it answered the first time (src/api/routes/jobs.ts). Records
 * written when they held the HTTP response itself must replay the same.
 */
describe('Idempotency-Key replays', () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
  });
  after(() => t.close());

  const post = (path: string, body: object, key: string) =>
    t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}${path}`,
      headers: { ...bearer(p.key), 'idempotency-key': key },
      payload: body,
    });

  /** A record as the earlier version wrote it: the HTTP response itself. */
  const writeEarlierRecord = async (
    path: string,
    body: object,
    key: string,
    response: { status_code: number; body: string; location: string | null },
  ) => {
    const fingerprint = requestFingerprint('POST', `/v2/agent/${p.projectId}${path}`, body);
    await t.app.store.db
      .insertInto('idempotency_keys')
      .values({
        project_id: p.projectId,
        key,
        fingerprint,
        created_at: new Date().toISOString(),
        ...response,
      })
      .execute();
  };

  test('the service answers a replay with the job as the first request left it, created or not', async () => {
    const idempotency = { key: 'service-1', fingerprint: 'f-1' };
    const first = await t.app.jobs.create(p.projectId, { prompt: 'Once' }, idempotency);
    assert.deepEqual([first.created, first.replayed], [true, false]);
    await t.app.store.db
      .updateTable('jobs')
      .set({ status: 'completed' })
      .where('id', '=', first.job.id)
      .execute();
    const again = await t.app.jobs.create(p.projectId, { prompt: 'Once' }, idempotency);
    assert.deepEqual(again.job, first.job, 'the job as created, not as it is now');
    assert.deepEqual([again.created, again.replayed], [true, true]);
    assert.equal(again.rateLimit.remaining, first.rateLimit.remaining, 'a replay uses nothing');

    const followUp = { key: 'service-2', fingerprint: 'f-2' };
    const message = await t.app.jobs.message(p.projectId, first.job.id, { prompt: 'More' }, followUp);
    assert.deepEqual([message.created, message.replayed], [false, false]);
    const replayed = await t.app.jobs.message(p.projectId, first.job.id, { prompt: 'More' }, followUp);
    assert.deepEqual([replayed.job, replayed.created, replayed.replayed], [message.job, false, true]);
  });

  test('a record stores whether it created the job as the earlier version did (201 or 200)', async () => {
    const created = await post('/job', { prompt: 'Stored' }, 'stored-1');
    const id = created.json().id as string;
    await t.app.store.db.updateTable('jobs').set({ status: 'failed' }).where('id', '=', id).execute();
    await post(`/job/${id}/retry`, {}, 'stored-2');
    const rows = await t.app.store.db
      .selectFrom('idempotency_keys')
      .select(['key', 'status_code', 'body'])
      .where('project_id', '=', p.projectId)
      .where('key', 'in', ['stored-1', 'stored-2'])
      .orderBy('key')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.key, r.status_code, JSON.parse(r.body).id]),
      [
        ['stored-1', 201, id],
        ['stored-2', 200, id],
      ],
    );
  });

  test('records written before, holding the HTTP response, replay byte for byte', async () => {
    const original = await post('/job', { prompt: 'Earlier' }, 'fresh');
    const job = original.json();
    const location = `/v2/agent/${p.projectId}/job/${job.id}`;
    const body = JSON.stringify(job);
    await writeEarlierRecord('/job', { prompt: 'Earlier create' }, 'earlier-create', {
      status_code: 201,
      body,
      location,
    });
    const create = await post('/job', { prompt: 'Earlier create' }, 'earlier-create');
    assert.deepEqual(
      [create.statusCode, create.payload, create.headers.location, create.headers['idempotent-replayed']],
      [201, original.payload, location, 'true'],
    );

    await writeEarlierRecord(`/job/${job.id}/message`, { prompt: 'Earlier follow-up' }, 'earlier-message', {
      status_code: 200,
      body,
      location: null,
    });
    const message = await post(`/job/${job.id}/message`, { prompt: 'Earlier follow-up' }, 'earlier-message');
    assert.deepEqual(
      [message.statusCode, message.payload, message.headers.location, message.headers['idempotent-replayed']],
      [200, original.payload, undefined, 'true'],
    );
  });
});
