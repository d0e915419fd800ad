import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '../logger.ts';
import type { Store } from './database.ts';

/** Cross-process nudges. They only say "look again"; the database stays the truth. */
export type Signal =
  | { kind: 'run-queued' }
  | { kind: 'run-cancelled'; runId: string }
  | { kind: 'job-event'; jobId: string }
  /** An API key was revoked: verified-key caches forget what they know (src/keys/key-cache.ts). */
  | { kind: 'keys-changed' }
  /** PostgreSQL, sent by the database (migration 0014): a job's row changed; or jobs were deleted. */
  | { kind: 'job-changed'; jobId: string }
  | { kind: 'jobs-changed' };

export interface Signals {
  /** Tells every process sharing the database; call after the change committed. */
  publish(signal: Signal): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(listener: (signal: Signal) => void): () => void;
  /**
   * PostgreSQL: a number that changes whenever the listener (re)connects, undefined while it is
   * not listening (signals of other processes may be missed then). Absent where signals of
   * other processes are not delivered this way.
   */
  listeningSince?(): number | undefined;
  /**
   * PostgreSQL: resolves true once every signal committed before the call has reached the
   * subscribers, false when that cannot be known in time (not listening, or the listening
   * connection did not answer within CAUGHT_UP_MS). Absent where signals of other processes are
   * not delivered this way.
   */
  caughtUp?(): Promise<boolean>;
  close(): Promise<void>;
}

const RECONNECT_MS = 1_000;
/** How long `caughtUp` waits for the listening connection before answering false. */
const CAUGHT_UP_MS = 250;
/** How often an SQLite process looks for another process's commits while someone listens. */
const SQLITE_WATCH_MS = 25;

/**
 * SQLite: the process's own signals go through an in-process emitter; another process's commits
 * (`docwright worker` beside `serve --no-worker` on one file, a CLI command) are seen by
 * `PRAGMA data_version`, which changes when another connection has committed. It is read every
 * SQLITE_WATCH_MS while anyone listens — a lookup in SQLite's memory, no I/O — and when it has
 * changed, the signals the other process sent are derived from the data: a queued run
 * (`run-queued`) and new transcript events (`job-event` per job). PostgreSQL: `NOTIFY` on a
 * channel per schema, heard by a dedicated `LISTEN` connection that reconnects after failures.
 * Missed signals are covered by the pollers that use them.
 */
export function createSignals(
  store: Store,
  options: { databaseUrl?: string | undefined; schema: string; logger: Logger },
): Signals {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  if (store.dialect === 'sqlite' || !options.databaseUrl) {
    const watcher = watchOtherProcesses(store, (signal) => emitter.emit('signal', signal), {
      intervalMs: SQLITE_WATCH_MS,
      logger: options.logger,
    });
    return {
      async publish(signal) {
        emitter.emit('signal', signal);
      },
      subscribe(listener) {
        emitter.on('signal', listener);
        watcher.start();
        return () => {
          emitter.off('signal', listener);
          if (emitter.listenerCount('signal') === 0) void watcher.stop();
        };
      },
      async close() {
        emitter.removeAllListeners();
        await watcher.stop();
      },
    };
  }

  const channel = `docwright_${options.schema}`.slice(0, 63);
  const databaseUrl = options.databaseUrl;
  let client: pg.Client | undefined;
  let closed = false;
  let connecting: Promise<void> | undefined;
  let connections = 0;
  let listening: number | undefined;
  /** The round trip of `caughtUp` in flight, and the one queued for the callers that came after it was sent. */
  let fence: Promise<boolean> | undefined;
  let nextFence: Promise<boolean> | undefined;
  /** A round trip outlasted CAUGHT_UP_MS and has not answered yet: later ones would wait as long. */
  let stalled = false;

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
      listening = undefined;
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
    if (client === next) listening = ++connections;
  }

  /**
   * A query on the listening connection. PostgreSQL sends a listening session the notifications
   * committed before a query ahead of the query's answer, so once it answers, every signal
   * committed before it was sent has been emitted (the client emits them as it reads them). The
   * query is the LISTEN again (a no-op): the connection keeps showing what it is for in
   * pg_stat_activity.
   */
  function roundTrip(): Promise<boolean> {
    const listener = client;
    const since = listening;
    if (!listener || since === undefined || stalled) return Promise.resolve(false);
    let timer: NodeJS.Timeout | undefined;
    const answered = listener.query(`LISTEN "${channel}"`).then(
      () => listening === since,
      () => false,
    );
    void answered.then(() => {
      clearTimeout(timer);
      stalled = false;
    });
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => {
        stalled = true;
        resolve(false);
      }, CAUGHT_UP_MS);
      timer.unref();
    });
    return Promise.race([answered, late]);
  }

  /** One round trip for all who ask at one moment; whoever asks while one is under way waits for the next. */
  function caughtUp(): Promise<boolean> {
    if (nextFence) return nextFence;
    if (!fence) {
      fence = roundTrip().finally(() => {
        fence = undefined;
      });
      return fence;
    }
    nextFence = fence.then(() => {
      nextFence = undefined;
      return caughtUp();
    });
    return nextFence;
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

  /**
   * Signals are sent in batches, one statement at a time: whatever is published while one is under
   * way goes out together in the next, each payload once. A signal only says "look again", so a
   * caller that publishes one already waiting shares its NOTIFY, which is still sent after the
   * caller's commit. A thousand creates and runs a second so send a few statements, not a thousand:
   * each is a round trip, and its socket write alone cost the server more CPU than its SQL.
   */
  let waiting: { payloads: Set<string>; sent: Promise<void> } | undefined;
  let sending: Promise<void> | undefined;
  const start = (payloads: string[]): Promise<void> => {
    const sent: Promise<void> =
      sql`select pg_notify(${channel}, payload) from unnest(${payloads}::text[]) as payload`
        .execute(store.db)
        .then(() => {})
        .finally(() => {
          if (sending === sent) sending = undefined;
        });
    sending = sent;
    return sent;
  };
  const notify = (payload: string): Promise<void> => {
    if (waiting) {
      waiting.payloads.add(payload);
      return waiting.sent;
    }
    if (!sending) return start([payload]);
    const payloads = new Set([payload]);
    const sent = sending
      .catch(() => {})
      .then(() => {
        waiting = undefined;
        return start([...payloads]);
      });
    waiting = { payloads, sent };
    return sent;
  };

  return {
    publish: (signal) => notify(JSON.stringify(signal)),
    subscribe(listener) {
      ensureListening();
      emitter.on('signal', listener);
      return () => emitter.off('signal', listener);
    },
    listeningSince() {
      return listening;
    },
    caughtUp,
    async close() {
      closed = true;
      listening = undefined;
      emitter.removeAllListeners();
      await connecting;
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}

/**
 * Watches an SQLite file for commits of other processes and derives their signals. Started by
 * the first subscriber, stopped with the last; the timer never keeps the process alive.
 */
function watchOtherProcesses(
  store: Store,
  emit: (signal: Signal) => void,
  options: { intervalMs: number; logger: Logger },
) {
  let timer: NodeJS.Timeout | undefined;
  let looking: Promise<void> = Promise.resolve();
  let version: number | undefined;
  let lastEventId = 0;

  const dataVersion = async () => {
    const { rows } = await sql<{ data_version: number }>`pragma data_version`.execute(store.db);
    return Number(rows[0]?.data_version);
  };

  async function look(): Promise<void> {
    const now = await dataVersion();
    if (now === version) return;
    version = now;
    const queued = await store.db
      .selectFrom('job_runs')
      .select('id')
      .where('status', '=', 'queued')
      .limit(1)
      .executeTakeFirst();
    if (queued) emit({ kind: 'run-queued' });
    const events = await store.db
      .selectFrom('job_events')
      .select(['job_id', (eb) => eb.fn.max('id').as('last')])
      .where('id', '>', lastEventId)
      .groupBy('job_id')
      .execute();
    for (const { job_id, last } of events) {
      lastEventId = Math.max(lastEventId, Number(last));
      emit({ kind: 'job-event', jobId: job_id });
    }
  }

  async function begin(): Promise<void> {
    version = await dataVersion();
    const row = await store.db
      .selectFrom('job_events')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    lastEventId = Number(row?.id ?? 0);
  }

  const failed = (error: Error) =>
    options.logger.debug({ err: { message: error.message } }, "looking for other processes' changes failed");

  return {
    start(): void {
      if (timer) return;
      looking = begin().catch(failed);
      let busy = false;
      timer = setInterval(() => {
        // A look still waiting (the file locked by another process) is not joined by more.
        if (busy) return;
        busy = true;
        looking = looking
          .then(look)
          .catch(failed)
          .finally(() => {
            busy = false;
          });
      }, options.intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      await looking;
    },
  };
}
