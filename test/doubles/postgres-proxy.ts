/**
 * A TCP proxy in front of PostgreSQL that can hold back what the database sends to docwright's
 * signal listeners (the connections whose startup message names `application_name`
 * `docwright-listen`), as a busy database or a slow network would: their notifications, and
 * the answers to their queries, wait until released. Everything else passes untouched.
 *
 *   const proxy = await startPostgresProxy(TEST_POSTGRES_URL);
 *   env.DATABASE_URL = proxy.url;
 *   proxy.holdListeners(); …; proxy.release();
 */

import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';

export interface PostgresProxy {
  /** The database URL, through the proxy. */
  url: string;
  /** Listener connections open now. */
  listeners(): number;
  /** From now on, what the database sends to listener connections is kept back. */
  holdListeners(): void;
  /** Sends what was kept back, and passes everything again. */
  release(): void;
  close(): Promise<void>;
}

const LISTENER = Buffer.from('application_name\0docwright-listen\0');

export async function startPostgresProxy(databaseUrl: string): Promise<PostgresProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  const listeners = new Set<Socket>();
  const held: { socket: Socket; data: Buffer }[] = [];
  let holding = false;

  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let first = true;
    client.on('data', (data) => {
      // The startup message is the client's first: it names the connection.
      if (first && data.includes(LISTENER)) listeners.add(client);
      first = false;
      upstream.write(data);
    });
    upstream.on('data', (data) => {
      if (holding && listeners.has(client)) held.push({ socket: client, data });
      else client.write(data);
    });
    const end = () => {
      listeners.delete(client);
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);

  return {
    url: url.href,
    listeners: () => listeners.size,
    holdListeners() {
      holding = true;
    },
    release() {
      holding = false;
      for (const { socket, data } of held.splice(0)) if (!socket.destroyed) socket.write(data);
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
