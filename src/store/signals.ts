import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '../logger.ts';
import type { Store } from './database.ts';

/** Cross-process nudges. They only say "look again"; the database stays the truth. */
export type Signal =
  | { kind: 'run-queued' }
  | { kind: 'run-cancelled'; runId: string }
  | { kind: 'job-event'; jobId: string };

export interface Signals {
  /** Tells every process sharing the database; call after the change committed. */
  publish(signal: Signal): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(listener: (signal: Signal) => void): () => void;
  close(): Promise<void>;
}

const RECONNECT_MS = 1_000;

/**
 * SQLite: the embedded default is one process, so an in-process emitter is
 * enough. PostgreSQL: `NOTIFY` on a channel per schema, heard by a dedicated
 * `LISTEN` connection that reconnects after failures. Missed signals are
 * covered by the pollers that use them.
 */
export function createSignals(
  store: Store,
  options: { databaseUrl?: string | undefined; schema: string; logger: Logger },
): Signals {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  if (store.dialect === 'sqlite' || !options.databaseUrl) {
    return {
      async publish(signal) {
        emitter.emit('signal', signal);
      },
      subscribe(listener) {
        emitter.on('signal', listener);
        return () => emitter.off('signal', listener);
      },
      async close() {
        emitter.removeAllListeners();
      },
    };
  }

  const channel = `docwright_${options.schema}`.slice(0, 63);
  const databaseUrl = options.databaseUrl;
  let client: pg.Client | undefined;
  let closed = false;
  let connecting: Promise<void> | undefined;

  async function listen(): Promise<void> {
    const next = new pg.Client({ connectionString: databaseUrl, application_name: 'docwright-listen' });
    next.on('notification', (message) => {
      if (message.channel !== channel || !message.payload) return;
      try {
        emitter.emit('signal', JSON.parse(message.payload) as Signal);
      } catch {
        // Not one of ours.
      }
    });
    const retry = (error?: Error) => {
      if (client !== next) return;
      client = undefined;
      next.end().catch(() => {});
      if (closed) return;
      options.logger.warn(
        { err: error ? { message: error.message } : undefined },
        'signal listener lost; reconnecting',
      );
      setTimeout(ensureListening, RECONNECT_MS).unref();
    };
    next.on('error', retry);
    next.on('end', () => retry());
    client = next;
    await next.connect();
    await next.query(`LISTEN "${channel}"`);
  }

  function ensureListening(): void {
    if (closed || client || connecting) return;
    connecting = listen()
      .catch((error: Error) => {
        client?.end().catch(() => {});
        client = undefined;
        if (!closed) setTimeout(ensureListening, RECONNECT_MS).unref();
        options.logger.debug({ err: { message: error.message } }, 'signal listener could not connect');
      })
      .finally(() => {
        connecting = undefined;
      });
  }

  return {
    async publish(signal) {
      await sql`select pg_notify(${channel}, ${JSON.stringify(signal)})`.execute(store.db);
    },
    subscribe(listener) {
      ensureListening();
      emitter.on('signal', listener);
      return () => emitter.off('signal', listener);
    },
    async close() {
      closed = true;
      emitter.removeAllListeners();
      await connecting;
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}
