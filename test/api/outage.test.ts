import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_POSTGRES_URL, testDialect } from '../helpers/database.ts';

/** A TCP proxy in front of PostgreSQL that the test can cut and restore, like a network outage. */
class CuttableProxy {
  #server: net.Server | undefined;
  #sockets = new Set<net.Socket>();
  #upstreams = new Set<net.Socket>();
  port = 0;

  /** Local ports of the proxy's connections to PostgreSQL (pg_stat_activity.client_port). */
  upstreamPorts(): number[] {
    return [...this.#upstreams].map((s) => s.localPort).filter((p): p is number => p !== undefined);
  }

  async open(): Promise<void> {
    if (this.#server?.listening) return;
    const target = new URL(TEST_POSTGRES_URL);
    this.#server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      this.#upstreams.add(upstream);
      upstream.on('close', () => this.#upstreams.delete(upstream));
      // A reset on one side resets the other, as a real network path would.
      for (const [s, other] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.#sockets.add(s);
        s.on('close', () => {
          this.#sockets.delete(s);
          other.destroy();
        });
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      this.#server!.once('error', reject);
      this.#server!.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = (this.#server.address() as net.AddressInfo).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.#server!.close(resolve));
    for (const s of this.#sockets) s.destroy();
    await closed;
  }
}

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
    const url = new URL(TEST_POSTGRES_URL);
    url.port = String(proxy.port);
    t = await startTestApp({ env: { DATABASE_URL: url.href } });
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
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    try {
      // Only this test's connections: other test files share the server.
      const { rowCount } = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where client_port = any($1::int[])',
        [proxy.upstreamPorts()],
      );
      assert.ok((rowCount ?? 0) > 0, 'there were connections to terminate');
    } finally {
      await admin.end();
    }
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await get()).statusCode);
    assert.ok(
      statuses.every((s) => s === 200 || s === 503),
      `statuses ${statuses}`,
    );
    assert.equal(statuses.at(-1), 200);
  });
});
