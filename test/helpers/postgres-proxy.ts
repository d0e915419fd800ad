import net from 'node:net';
import pg from 'pg';
import { TEST_POSTGRES_URL } from './database.ts';

/** A TCP proxy in front of PostgreSQL that the test can cut and restore, like a network outage. */
export class CuttableProxy {
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

/** Terminates the PostgreSQL backends of `proxy`'s connections (as `pg_terminate_backend` does on a failover); returns how many. */
export async function terminateBackends(proxy: CuttableProxy): Promise<number> {
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    const { rowCount } = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where client_port = any($1::int[])',
      [proxy.upstreamPorts()],
    );
    return rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

/** DATABASE_URL through the proxy. */
export function proxiedUrl(proxy: CuttableProxy): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.port = String(proxy.port);
  return url.href;
}
