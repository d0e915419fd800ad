import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { CuttableProxy, proxiedUrl, terminateBackends } from '../helpers/postgres-proxy.ts';

const onlyPostgres =
  testDialect === 'postgres'
    ? false
    : 'skipped: a database outage is a PostgreSQL scenario (run with DOCWRIGHT_TEST_DB=postgres)';

describe('database outage (PostgreSQL)', { skip: onlyPostgres }, () => {
  const proxy = new CuttableProxy();
  let t: TestApp;
  let p: SeededProject;
  let jobUrl: string;
  before(async () => {
    await proxy.open();
    t = await startTestApp({ env: { DATABASE_URL: proxiedUrl(proxy) } });
    p = await seedProject(t.app);
    const created = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job`,
      headers: bearer(p.key),
      payload: { prompt: 'x' },
    });
    jobUrl = `/v2/agent/${p.projectId}/job/${created.json().id}`;
  });
  after(async () => {
    await proxy.open();
    await t.close();
    await proxy.cut();
  });

  const get = () => t.server.inject({ method: 'GET', url: jobUrl, headers: bearer(p.key) });
  const create = () =>
    t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job`,
      headers: bearer(p.key),
      payload: { prompt: 'y' },
    });

  function assertUnavailable(res: Awaited<ReturnType<typeof get>>) {
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(res.headers['retry-after'], '5');
    const body = res.json();
    assert.equal(body.code, 'service-unavailable');
    assert.doesNotMatch(
      JSON.stringify(body),
      /ECONN|127\.0\.0\.1|postgres|select|stack/i,
      'no internals in the body',
    );
  }

  test('network cut: 503 with Retry-After on reads, writes and readiness; recovery without a restart', async () => {
    assert.equal((await get()).statusCode, 200);
    await proxy.cut();
    assertUnavailable(await get());
    assertUnavailable(await create());
    const ready = await t.server.inject('/readyz');
    assert.equal(ready.statusCode, 503);
    assert.equal((await t.server.inject('/healthz')).statusCode, 200, 'the process itself is alive');

    await proxy.open();
    assert.equal((await get()).statusCode, 200);
    assert.equal((await create()).statusCode, 201);
    assert.equal((await t.server.inject('/readyz')).statusCode, 200);
  });

  test('connections terminated by the server: never a 500, and service resumes', async () => {
    assert.equal((await get()).statusCode, 200);
    // Only this test's connections: other test files share the server.
    assert.ok((await terminateBackends(proxy)) > 0, 'there were connections to terminate');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await get()).statusCode);
    assert.ok(
      statuses.every((s) => s === 200 || s === 503),
      `statuses ${statuses}`,
    );
    assert.equal(statuses.at(-1), 200);
  });
});
