import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { startServerProcess } from '../helpers/process.ts';

async function createMany(urls: string[], projectId: string, key: string, count: number) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      fetch(`${urls[i % urls.length]}/v2/agent/${projectId}/job`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: `job ${i}` }),
      }).then(async (res) => ({
        status: res.status,
        headers: res.headers,
        body: (await res.json()) as { code: string },
      })),
    ),
  );
}

function assertExactlyOneRejected(results: Awaited<ReturnType<typeof createMany>>) {
  const created = results.filter((r) => r.status === 201);
  const limited = results.filter((r) => r.status === 429);
  assert.equal(created.length, 100, `statuses: ${JSON.stringify(results.map((r) => r.status))}`);
  assert.equal(limited.length, 1);
  const [rejected] = limited;
  assert.equal(rejected!.body.code, 'rate-limited');
  assert.match(rejected!.headers.get('retry-after')!, /^\d+$/);
  assert.ok(Number(rejected!.headers.get('retry-after')) > 3500);
  assert.match(rejected!.headers.get('ratelimit')!, /^"create";r=0;t=\d+$/);
  // Every remaining count from 99 down to 0 was handed out exactly once.
  const remaining = created
    .map((r) => Number(/r=(\d+)/.exec(r.headers.get('ratelimit')!)![1]))
    .sort((x, y) => x - y);
  assert.deepEqual(
    remaining,
    Array.from({ length: 100 }, (_, i) => i),
  );
}

describe('rate limit (docs/api/rate-limits.mdx)', () => {
  let t: TestApp;
  let now = new Date('2026-03-01T12:00:00.000Z');
  before(async () => {
    t = await startTestApp({ now: () => now });
  });
  after(() => t.close());
  let listening: Promise<string> | undefined;
  const baseUrl = () => {
    listening ??= t.listen();
    return listening;
  };

  test('101 concurrent creates over real HTTP: exactly 100 × 201 and 1 × 429', async () => {
    const url = await baseUrl();
    const p = await seedProject(t.app);
    assertExactlyOneRejected(await createMany([url], p.projectId, p.key, 101));
    const uses = await t.app.store.db
      .selectFrom('rate_limit_uses')
      .select('id')
      .where('project_id', '=', p.projectId)
      .execute();
    assert.equal(uses.length, 100, 'the 429 counted nothing');
    const jobs = await t.app.store.db
      .selectFrom('jobs')
      .select('id')
      .where('project_id', '=', p.projectId)
      .execute();
    assert.equal(jobs.length, 100);
  });

  test('rolling hour: headers count down, Retry-After says when a use frees up, 429s and replays count nothing', async () => {
    const p = await seedProject(t.app, { rateLimit: 3 });
    const start = now.getTime();
    const at = (minutes: number) => {
      now = new Date(start + minutes * 60_000);
    };
    const create = (headers: Record<string, string> = {}) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${p.projectId}/job`,
        headers: { ...bearer(p.key), ...headers },
        payload: { prompt: 'x' },
      });

    at(0);
    let res = await create();
    assert.equal(res.headers['ratelimit-policy'], '"create";q=3;w=3600');
    assert.equal(res.headers.ratelimit, '"create";r=2;t=3600');
    at(10);
    res = await create({ 'idempotency-key': 'k' });
    assert.equal(res.headers.ratelimit, '"create";r=1;t=3000');
    const jobId = res.json().id;
    at(20);
    assert.equal((await create()).headers.ratelimit, '"create";r=0;t=2400');
    at(30);
    res = await create();
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '1800');
    assert.equal(res.headers.ratelimit, '"create";r=0;t=1800');
    // A replay is answered although the limit is reached, and uses nothing.
    const replay = await create({ 'idempotency-key': 'k' });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.json().id, jobId);
    // Follow-ups count too.
    await t.app.store.db.updateTable('jobs').set({ status: 'completed' }).where('id', '=', jobId).execute();
    const msg = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job/${jobId}/message`,
      headers: bearer(p.key),
      payload: { prompt: 'y' },
    });
    assert.equal(msg.statusCode, 429);
    assert.equal(msg.headers['retry-after'], '1800');
    // Errors after authentication carry the headers too.
    const invalid = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job`,
      headers: bearer(p.key),
      payload: { prompt: '' },
    });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.headers.ratelimit, '"create";r=0;t=1800');

    at(60); // the first use is exactly an hour old: it has left the window
    res = await create();
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers.ratelimit, '"create";r=0;t=600');
    const stored = await t.app.store.db
      .selectFrom('rate_limit_uses')
      .select('used_at')
      .where('project_id', '=', p.projectId)
      .execute();
    assert.equal(stored.length, 3, 'the use that left the window was pruned');
    at(61);
    assert.equal((await create()).statusCode, 429);
    at(70);
    const follow = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job/${jobId}/message`,
      headers: bearer(p.key),
      payload: { prompt: 'y' },
    });
    assert.equal(follow.statusCode, 200);
    assert.equal(follow.headers.ratelimit, '"create";r=0;t=600');
  });

  test('uses that leave the window together free their places at once; the stored count matches the stored uses', async () => {
    const p = await seedProject(t.app, { rateLimit: 5 });
    const start = now.getTime();
    const create = async (minutes: number) => {
      now = new Date(start + minutes * 60_000);
      const res = await t.server.inject({
        method: 'POST',
        url: `/v2/agent/${p.projectId}/job`,
        headers: bearer(p.key),
        payload: { prompt: 'x' },
      });
      return `${res.statusCode} ${res.headers.ratelimit}`;
    };
    const stored = async () => {
      const db = t.app.store.db;
      const rows = await db
        .selectFrom('rate_limit_uses')
        .select('id')
        .where('project_id', '=', p.projectId)
        .execute();
      const count = await db
        .selectFrom('rate_limit_counts')
        .select('uses')
        .where('project_id', '=', p.projectId)
        .executeTakeFirst();
      return [rows.length, count?.uses];
    };
    for (const minute of [0, 1, 2]) await create(minute);
    assert.equal(await create(3), '201 "create";r=1;t=3420');
    // At 62 minutes the uses of minutes 0, 1 and 2 have left: one of 5 is in use before this one.
    assert.equal(await create(62), '201 "create";r=3;t=60');
    assert.deepEqual(await stored(), [2, 2], 'three uses pruned, and counted out');
    assert.equal(await create(62), '201 "create";r=2;t=60');
    assert.equal(await create(62), '201 "create";r=1;t=60');
    assert.equal(await create(62), '201 "create";r=0;t=60');
    assert.equal(await create(62), '429 "create";r=0;t=60');
    assert.deepEqual(await stored(), [5, 5]);
  });

  test('v1 creates count against the same limit as v2: with a limit of 1, v1 then v2 is 429, and v2 then v1', async () => {
    const url = await baseUrl();
    const v1Create = async (p: SeededProject) => {
      // The v1 answer is the run's event stream: read the status and headers, then hang up.
      const hangUp = new AbortController();
      const res = await fetch(`${url}/v1/agent/${p.projectId}/job`, {
        method: 'POST',
        headers: { ...bearer(p.key), 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'Fix the typos' }] }),
        signal: hangUp.signal,
      });
      const answer = { status: res.status, ratelimit: res.headers.get('ratelimit') };
      hangUp.abort();
      return answer;
    };
    const v2Create = (p: SeededProject) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${p.projectId}/job`,
        headers: bearer(p.key),
        payload: { prompt: 'Fix the typos' },
      });
    const jobsOf = async (p: SeededProject) =>
      (await t.app.store.db.selectFrom('jobs').select('id').where('project_id', '=', p.projectId).execute())
        .length;

    const first = await seedProject(t.app, { rateLimit: 1 });
    assert.deepEqual(await v1Create(first), { status: 200, ratelimit: '"create";r=0;t=3600' });
    const afterV1 = await v2Create(first);
    assert.equal(afterV1.statusCode, 429, 'the v1 create used the one use');
    assert.equal(afterV1.json().code, 'rate-limited');
    assert.equal(await jobsOf(first), 1);

    const second = await seedProject(t.app, { rateLimit: 1 });
    assert.equal((await v2Create(second)).statusCode, 201);
    assert.equal((await v1Create(second)).status, 429, 'the v2 create used the one use');
    assert.equal(await jobsOf(second), 1);
  });

  test('the limit is per project, not per key, and configurable per project', async () => {
    const p = await seedProject(t.app, { rateLimit: 2 });
    const second = await t.app.keys.create(p.projectId);
    const q = await seedProject(t.app, { rateLimit: 2 });
    const create = (projectId: string, key: string) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${projectId}/job`,
        headers: bearer(key),
        payload: { prompt: 'x' },
      });
    assert.equal((await create(p.projectId, p.key)).statusCode, 201);
    assert.equal((await create(p.projectId, second.key)).statusCode, 201);
    assert.equal((await create(p.projectId, second.key)).statusCode, 429);
    assert.equal((await create(q.projectId, q.key)).statusCode, 201, 'another project is unaffected');
    await t.app.projects.update(p.projectId, { rateLimit: 3 });
    assert.equal((await create(p.projectId, p.key)).statusCode, 201);
  });
});

describe('rate limit across two server processes sharing one database', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('101 concurrent creates spread over two processes: exactly 100 × 201 and 1 × 429', async () => {
    const p = await seedProject(t.app);
    const started = await Promise.allSettled([
      startServerProcess(t.database.env),
      startServerProcess(t.database.env),
    ]);
    // One that started is stopped below even when the other did not start.
    const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      assertExactlyOneRejected(
        await createMany(
          servers.map((s) => s.url),
          p.projectId,
          p.key,
          101,
        ),
      );
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
    const jobs = await t.app.store.db
      .selectFrom('jobs')
      .select('id')
      .where('project_id', '=', p.projectId)
      .execute();
    assert.equal(jobs.length, 100);
  });
});
