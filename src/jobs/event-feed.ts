import { setImmediate } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Database, JobEventRow } from '../store/schema.ts';
import type { Signals } from '../store/signals.ts';
import { type JobEvent, listEventRows, toJobEvent } from './events.ts';

/**
 * Events read per query; a long transcript arrives in batches of this size. Small, so that one
 * batch of one stream is a short task: a burst of streams interleaves with everything else.
 */
const BATCH = 20;
/** How often the feed looks again when no wake-up signal arrives. */
const POLL_MS = 1_000;

export interface FollowOptions {
  /** Start after this event id (exclusive); default: from the first event. */
  after?: number | undefined;
  /** Ends the feed early (the client left). */
  signal?: AbortSignal;
}

/**
 * A job's transcript as it is written: the events after `after` in batches, oldest first,
 * then new ones as they arrive (woken by `job-event` signals, with a poll as fallback).
 * It ends once the job has left `active` and its last event was delivered; a job's status
 * changes in the same transaction as its ending event, so reading the status before the
 * events can never end the feed before that event. The consumer pulls: nothing is read
 * from the database before it asks for the next batch.
 */
export async function* followJobEvents(
  deps: { db: Kysely<Database>; signals: Signals },
  jobId: string,
  options: FollowOptions = {},
): AsyncGenerator<JobEvent[], void, undefined> {
  for await (const rows of followJobEventRows(deps, jobId, options)) yield rows.map(toJobEvent);
}

/** `followJobEvents` as stored rows (see `jobEventJson`), for streams that send them as they are. */
export async function* followJobEventRows(
  deps: { db: Kysely<Database>; signals: Signals },
  jobId: string,
  options: FollowOptions = {},
): AsyncGenerator<JobEventRow[], void, undefined> {
  const { signal } = options;
  let after = options.after;
  let wake: (() => void) | undefined;
  // A signal that arrives while the feed is reading (or while the consumer holds a batch) is
  // remembered, so that the next wait is skipped instead of lasting a whole poll.
  let nudged = false;
  const unsubscribe = deps.signals.subscribe((s) => {
    if (s.kind !== 'job-event' || s.jobId !== jobId) return;
    nudged = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    while (!signal?.aborted) {
      nudged = false;
      const job = await deps.db
        .selectFrom('jobs')
        .select('status')
        .where('id', '=', jobId)
        .executeTakeFirst();
      const events = await listEventRows(deps.db, jobId, { after, limit: BATCH });
      if (events.length > 0) {
        after = Number(events[events.length - 1]!.id);
        yield events;
        // SQLite answers synchronously: without a turn of the event loop here, a burst of streams
        // runs batch after batch as one chain of microtasks and no request is served meanwhile.
        await setImmediate();
        if (events.length === BATCH) continue;
      }
      if (job?.status !== 'active') return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (nudged || signal?.aborted) wake();
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    signal?.removeEventListener('abort', onAbort);
  }
}
