import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

describe('job API', () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app, { model: 'openai/gpt-test', allowedModels: ['anthropic/claude-test'] });
  });
  after(() => t.close());

  const create = (body: unknown, headers: Record<string, string> = {}) =>
    t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job`,
      headers: { ...bearer(p.key), 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });
  const get = (id: string) =>
    t.server.inject({ method: 'GET', url: `/v2/agent/${p.projectId}/job/${id}`, headers: bearer(p.key) });
  const post = (path: string, body?: object, headers: Record<string, string> = {}) =>
    t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}${path}`,
      headers: { ...bearer(p.key), ...headers },
      ...(body === undefined ? {} : { payload: body }),
    });

  test('create answers 201 with Location and a complete record; get returns the same job', async () => {
    const res = await create({ prompt: '  Document the new flag  ' });
    assert.equal(res.statusCode, 201);
    const job = res.json();
    assert.match(job.id, /^job_[0-9a-z]{26}$/);
    assert.equal(res.headers.location, `/v2/agent/${p.projectId}/job/${job.id}`);
    assert.equal(job.status, 'active');
    assert.deepEqual(job.source, { repository: `file://${p.repository}`, ref: 'main' });
    assert.equal(job.model, 'openai/gpt-test');
    for (const field of ['prLink', 'archivedAt', 'branch', 'summary', 'error', 'usage'])
      assert.equal(job[field], null, field);
    assert.match(job.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(job.updatedAt, job.createdAt);
    const fetched = await get(job.id);
    assert.equal(fetched.statusCode, 200);
    assert.deepEqual(fetched.json(), job);
    const events = await t.server.inject({
      method: 'GET',
      url: `/v2/agent/${p.projectId}/job/${job.id}/events`,
      headers: bearer(p.key),
    });
    assert.equal(events.statusCode, 200);
    const [created] = events.json().events;
    assert.equal(created.type, 'job.created');
    assert.equal(created.data.prompt, 'Document the new flag', 'the prompt is stored trimmed');
  });

  test('optional create fields: ref, allowed model, draft; a model outside the allowed set is refused', async () => {
    const ok = await create({ prompt: 'x', ref: 'release/2.0', model: 'anthropic/claude-test', draft: true });
    assert.equal(ok.statusCode, 201);
    assert.equal(ok.json().source.ref, 'release/2.0');
    assert.equal(ok.json().model, 'anthropic/claude-test');
    const bad = await create({ prompt: 'x', model: 'openai/other' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(
      bad.json().errors.map((e: { field: string }) => e.field),
      ['model'],
    );
    const badRef = await create({ prompt: 'x', ref: 'bad..ref' });
    assert.equal(badRef.statusCode, 400);
    assert.equal(badRef.json().errors[0].field, 'ref');
  });

  test('invalid bodies are 400 with each offending field listed', async () => {
    const cases: [unknown, string[]][] = [
      [{}, ['prompt']],
      [{ prompt: '' }, ['prompt']],
      [{ prompt: '   \n\t ' }, ['prompt']],
      [{ prompt: 42 }, ['prompt']],
      [{ prompt: 'ok', promt: 'typo' }, ['promt']],
      [{ prompt: 'x'.repeat(100_001) }, ['prompt']],
      [{ prompt: 'ok', draft: 'yes' }, ['draft']],
      [[], ['(root)']],
      ['just a string', ['(root)']],
    ];
    for (const [body, fields] of cases) {
      const res = await create(body);
      assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      const problem = res.json();
      assert.equal(problem.code, 'invalid-request');
      assert.equal(problem.status, 400);
      assert.equal(problem.error, problem.detail);
      assert.deepEqual(
        problem.errors.map((e: { field: string }) => e.field),
        fields,
        JSON.stringify(body).slice(0, 80),
      );
    }
  });

  test('malformed JSON is 400, a non-JSON body 415, a body over 256 KiB 413', async () => {
    const malformed = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job`,
      headers: { ...bearer(p.key), 'content-type': 'application/json' },
      payload: '{"prompt": "x",',
    });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().code, 'invalid-json');
    const form = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job`,
      headers: { ...bearer(p.key), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'prompt=x',
    });
    assert.equal(form.statusCode, 415);
    assert.equal(form.json().code, 'unsupported-media-type');
    const huge = await create({ prompt: 'x'.repeat(300 * 1024) });
    assert.equal(huge.statusCode, 413);
    assert.equal(huge.json().code, 'payload-too-large');
    // The API's own limit, not the webhooks' 25 MiB.
    assert.equal(huge.json().detail, 'the request body is larger than 256 KiB');
  });

  test('list: newest first, status filter, cursor pagination, query validation', async () => {
    const fresh = await seedProject(t.app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.server.inject({
        method: 'POST',
        url: `/v2/agent/${fresh.projectId}/job`,
        headers: bearer(fresh.key),
        payload: { prompt: `job ${i}` },
      });
      ids.push(res.json().id);
    }
    await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${fresh.projectId}/job/${ids[1]}/archive`,
      headers: bearer(fresh.key),
    });
    const list = (query: string) =>
      t.server.inject({
        method: 'GET',
        url: `/v2/agent/${fresh.projectId}/jobs${query}`,
        headers: bearer(fresh.key),
      });

    const all = (await list('')).json();
    assert.deepEqual(
      all.jobs.map((j: { id: string }) => j.id),
      [...ids].reverse(),
    );
    assert.equal(all.nextCursor, null);

    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const page: { jobs: { id: string }[]; nextCursor: string | null } = (
        await list(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      assert.ok(page.jobs.length <= 2);
      seen.push(...page.jobs.map((j: { id: string }) => j.id));
      cursor = page.nextCursor;
      pages++;
    }
    assert.deepEqual(seen, [...ids].reverse());
    assert.equal(pages, 3);

    const archived = (await list('?status=archived')).json();
    assert.deepEqual(
      archived.jobs.map((j: { id: string }) => j.id),
      [ids[1]],
    );
    const active = (await list('?status=active&limit=100')).json();
    assert.equal(active.jobs.length, 4);

    for (const bad of [
      '?limit=0',
      '?limit=101',
      '?limit=abc',
      '?status=done',
      '?cursor=nonsense',
      '?sort=asc',
    ]) {
      const res = await list(bad);
      assert.equal(res.statusCode, 400, bad);
      assert.ok(res.json().errors.length > 0, bad);
    }
  });

  test('states: archive is idempotent, follow-ups obey docs/api/overview.mdx', async () => {
    const job = (await create({ prompt: 'first' })).json();

    const busy = await post(`/job/${job.id}/message`, { prompt: 'more' });
    assert.equal(busy.statusCode, 409);
    assert.equal(busy.json().code, 'job-busy');

    // A run that ended (the worker's transition, simulated at the database).
    await t.app.store.db
      .updateTable('jobs')
      .set({ status: 'completed', pr_link: 'https://example.test/pr/1', branch: 'docwright/x' })
      .where('id', '=', job.id)
      .execute();
    assert.equal((await get(job.id)).json().prLink, 'https://example.test/pr/1');

    const followUp = await post(`/job/${job.id}/message`, { prompt: 'also fix the typo' });
    assert.equal(followUp.statusCode, 200);
    assert.equal(followUp.json().status, 'active');
    assert.equal(followUp.json().prLink, null, 'prLink is null while a follow-up runs');
    assert.match(followUp.headers.ratelimit as string, /^"create";r=\d+;t=\d+$/);
    const runs = await t.app.store.db
      .selectFrom('job_runs')
      .select(['seq', 'prompt', 'status'])
      .where('job_id', '=', job.id)
      .orderBy('seq')
      .execute();
    assert.deepEqual(runs, [
      { seq: 1, prompt: 'first', status: 'queued' },
      { seq: 2, prompt: 'also fix the typo', status: 'queued' },
    ]);

    const archived = await post(`/job/${job.id}/archive`);
    assert.equal(archived.statusCode, 200);
    assert.equal(archived.json().status, 'archived');
    assert.ok(archived.json().archivedAt);
    const again = await post(`/job/${job.id}/archive`);
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), archived.json(), 'archiving twice changes nothing');
    const cancelled = await t.app.store.db
      .selectFrom('job_runs')
      .select('status')
      .where('job_id', '=', job.id)
      .where('seq', '=', 2)
      .executeTakeFirstOrThrow();
    assert.equal(cancelled.status, 'cancelled');

    const late = await post(`/job/${job.id}/message`, { prompt: 'more' });
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'job-archived');
  });

  test('retry (extension): a failed job runs its last instruction again; only a failed job; counted like a follow-up', async () => {
    const fresh = await seedProject(t.app, { rateLimit: 3 });
    const retry = (id: string, body?: object, headers: Record<string, string> = {}) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${fresh.projectId}/job/${id}/retry`,
        headers: { ...bearer(fresh.key), ...headers },
        ...(body === undefined ? {} : { payload: body }),
      });
    const created = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${fresh.projectId}/job`,
      headers: bearer(fresh.key),
      payload: { prompt: 'Fix the typo' },
    });
    const id = created.json().id;
    assert.equal((await retry(id)).json().code, 'job-busy');
    // The first run failed (the worker's transition, simulated at the database); then a follow-up failed too.
    const fail = async (seq: number) => {
      await t.app.store.db
        .updateTable('job_runs')
        .set({ status: 'failed', error_code: 'model-unavailable', error_message: 'down' })
        .where('job_id', '=', id)
        .where('seq', '=', seq)
        .execute();
      await t.app.store.db
        .updateTable('jobs')
        .set({ status: 'failed', error_code: 'model-unavailable', error_message: 'down' })
        .where('id', '=', id)
        .execute();
    };
    await fail(1);
    const retried = await retry(id, undefined, { 'idempotency-key': 'retry-1' });
    assert.equal(retried.statusCode, 200, retried.body);
    assert.equal(retried.json().status, 'active');
    assert.equal(retried.json().error, null);
    assert.match(retried.headers.ratelimit as string, /^"create";r=1;/, 'a retry uses the rate limit');
    const replay = await retry(id, undefined, { 'idempotency-key': 'retry-1' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), retried.json());
    const runs = () =>
      t.app.store.db
        .selectFrom('job_runs')
        .select(['seq', 'prompt', 'status'])
        .where('job_id', '=', id)
        .orderBy('seq')
        .execute();
    assert.deepEqual(await runs(), [
      { seq: 1, prompt: 'Fix the typo', status: 'failed' },
      { seq: 2, prompt: 'Fix the typo', status: 'queued' },
    ]);
    const events = await t.app.jobs.events(fresh.projectId, id, {});
    assert.deepEqual(events.at(-1)!.data, { prompt: 'Fix the typo', retryOf: 1 });
    assert.equal(events.at(-1)!.type, 'job.retried');

    // A retry runs the last instruction: after a failed follow-up, the follow-up's.
    await fail(2);
    await t.app.store.db.updateTable('jobs').set({ status: 'completed' }).where('id', '=', id).execute();
    const notFailed = await retry(id);
    assert.equal(notFailed.statusCode, 409);
    assert.equal(notFailed.json().code, 'job-not-failed');
    assert.equal(
      (
        await t.server.inject({
          method: 'POST',
          url: `/v2/agent/${fresh.projectId}/job/${id}/message`,
          headers: bearer(fresh.key),
          payload: { prompt: 'Also the heading' },
        })
      ).statusCode,
      200,
    );
    await fail(3);
    assert.equal((await retry(id, { prompt: 'no fields' })).statusCode, 400, 'a retry takes no fields');
    const limited = await retry(id);
    assert.equal(limited.statusCode, 429, 'the limit of 3 is used: create, retry, follow-up');
    assert.deepEqual((await runs()).length, 3);
    await t.app.projects.update(fresh.projectId, { rateLimit: 10 });
    assert.equal((await retry(id, {})).statusCode, 200);
    assert.deepEqual((await runs()).at(-1), { seq: 4, prompt: 'Also the heading', status: 'queued' });

    await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${fresh.projectId}/job/${id}/archive`,
      headers: bearer(fresh.key),
    });
    assert.equal((await retry(id)).json().code, 'job-archived');
    assert.equal((await retry('job_00000000000000000000000000')).statusCode, 404);
  });

  test('unknown jobs are 404 in every route', async () => {
    for (const id of ['job_00000000000000000000000000', 'nope', `job_${'z'.repeat(26)}`]) {
      assert.equal((await get(id)).json().code, 'job-not-found');
      assert.equal((await post(`/job/${id}/archive`)).statusCode, 404);
      assert.equal((await post(`/job/${id}/message`, { prompt: 'x' })).statusCode, 404);
    }
    const route = await t.server.inject({ method: 'GET', url: '/v3/nothing' });
    assert.equal(route.statusCode, 404);
    assert.equal(route.json().code, 'not-found');
  });

  test('Idempotency-Key: a repeat replays the original response and counts nothing; another body is 422', async () => {
    const fresh = await seedProject(t.app);
    const send = (body: object, key: string) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${fresh.projectId}/job`,
        headers: { ...bearer(fresh.key), 'idempotency-key': key },
        payload: body,
      });
    const first = await send({ prompt: 'once', draft: false }, 'key-1');
    assert.equal(first.statusCode, 201);
    assert.match(first.headers.ratelimit as string, /r=99;/);
    // The job changes meanwhile: a replay still answers what the first request did, byte for byte.
    await t.app.store.db
      .updateTable('jobs')
      .set({ summary: 'changed since' })
      .where('id', '=', first.json().id)
      .execute();
    const repeat = await send({ draft: false, prompt: 'once' }, 'key-1');
    assert.equal(repeat.statusCode, 201);
    assert.equal(repeat.payload, first.payload);
    assert.equal(repeat.headers['content-type'], first.headers['content-type']);
    assert.equal(repeat.headers.location, `/v2/agent/${fresh.projectId}/job/${first.json().id}`);
    assert.equal(repeat.headers.location, first.headers.location);
    assert.equal(repeat.headers['idempotent-replayed'], 'true');
    assert.match(repeat.headers.ratelimit as string, /r=99;/, 'a replay uses nothing');
    const jobs = await t.app.store.db
      .selectFrom('jobs')
      .select('id')
      .where('project_id', '=', fresh.projectId)
      .execute();
    assert.equal(jobs.length, 1);

    const other = await send({ prompt: 'something else' }, 'key-1');
    assert.equal(other.statusCode, 422);
    assert.equal(other.json().code, 'idempotency-key-mismatch');

    const invalid = await send({ prompt: 'x' }, 'ключ');
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().errors[0].field, 'header.Idempotency-Key');

    // The same key on the follow-up route is a different request.
    const id = first.json().id;
    await t.app.store.db.updateTable('jobs').set({ status: 'completed' }).where('id', '=', id).execute();
    const msg = (key: string) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${fresh.projectId}/job/${id}/message`,
        headers: { ...bearer(fresh.key), 'idempotency-key': key },
        payload: { prompt: 'again' },
      });
    assert.equal((await msg('key-1')).statusCode, 422);
    const m1 = await msg('key-2');
    assert.equal(m1.statusCode, 200);
    const m2 = await msg('key-2');
    assert.equal(m2.statusCode, 200, 'a replay succeeds although the job is now active');
    assert.equal(m2.payload, m1.payload);
    assert.equal(m1.headers.location, undefined, 'a follow-up has no Location');
    assert.equal(m2.headers.location, undefined);
    assert.equal(m2.headers['idempotent-replayed'], 'true');
    const runs = await t.app.store.db.selectFrom('job_runs').select('id').where('job_id', '=', id).execute();
    assert.equal(runs.length, 2);
  });

  test('concurrent requests with one Idempotency-Key create one job', async () => {
    const fresh = await seedProject(t.app);
    const url = await t.listen();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${url}/v2/agent/${fresh.projectId}/job`, {
          method: 'POST',
          headers: { ...bearer(fresh.key), 'content-type': 'application/json', 'idempotency-key': 'same' },
          body: JSON.stringify({ prompt: 'once' }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } })),
      ),
    );
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([201]));
    assert.equal(new Set(responses.map((r) => r.body.id)).size, 1);
  });

  test('Idempotency-Key is scoped to the project: one key and body in two projects create a job in each', async () => {
    const [a, b] = [await seedProject(t.app), await seedProject(t.app)];
    // The README's own example key: every project's first client may well use it.
    const send = (project: SeededProject) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${project.projectId}/job`,
        headers: { ...bearer(project.key), 'idempotency-key': 'typos-1' },
        payload: { prompt: 'Fix the typos' },
      });
    const inA = await send(a);
    const inB = await send(b);
    assert.equal(inA.statusCode, 201);
    assert.equal(inB.statusCode, 201, inB.body);
    assert.equal(inB.headers['idempotent-replayed'], undefined, 'not a replay of the other project');
    assert.notEqual(inB.json().id, inA.json().id);
    for (const [project, res] of [
      [a, inA],
      [b, inB],
    ] as const) {
      const rows = await t.app.store.db
        .selectFrom('jobs')
        .select('id')
        .where('project_id', '=', project.projectId)
        .execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [res.json().id],
      );
      const replay = await send(project);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.json().id, res.json().id, 'each project replays its own job');
    }
  });

  test('/metrics: Prometheus text with jobs by status, queue depth and requests by route', async () => {
    const res = await t.server.inject('/metrics');
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^text\/plain/);
    const active = (
      await t.app.store.db.selectFrom('jobs').select('id').where('status', '=', 'active').execute()
    ).length;
    assert.match(res.body, new RegExp(`^docwright_jobs\\{status="active"\\} ${active}$`, 'm'));
    assert.match(res.body, /^docwright_queue_depth \d+$/m);
    assert.match(
      res.body,
      /^docwright_http_requests_total\{method="POST",route="\/v2\/agent\/:projectId\/job",status="201"\} \d+$/m,
    );
    assert.match(res.body, /^# TYPE docwright_pickup_latency_seconds histogram$/m);
  });

  test('health, readiness and the OpenAPI document', async () => {
    assert.deepEqual((await t.server.inject('/healthz')).json(), { status: 'ok' });
    assert.deepEqual((await t.server.inject('/readyz')).json(), { status: 'ready' });
    const doc = (await t.server.inject('/openapi.json')).json();
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/v1/agent/{projectId}/job',
      '/v1/agent/{projectId}/job/{id}',
      '/v1/agent/{projectId}/jobs',
      '/v1/workflow/{projectId}/{automationId}/trigger',
      '/v2/agent/{projectId}/automations',
      '/v2/agent/{projectId}/automations/{id}',
      '/v2/agent/{projectId}/automations/{id}/runs',
      '/v2/agent/{projectId}/automations/{id}/trigger',
      '/v2/agent/{projectId}/job',
      '/v2/agent/{projectId}/job/{id}',
      '/v2/agent/{projectId}/job/{id}/archive',
      '/v2/agent/{projectId}/job/{id}/diff',
      '/v2/agent/{projectId}/job/{id}/events',
      '/v2/agent/{projectId}/job/{id}/message',
      '/v2/agent/{projectId}/job/{id}/retry',
      '/v2/agent/{projectId}/jobs',
    ]);
    assert.equal(doc.components.schemas.CreateJobRequest.properties.prompt.maxLength, 100_000);
    assert.equal(doc.components.schemas.CreateJobRequest.additionalProperties, false);
  });
});
