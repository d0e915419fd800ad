/**
 * `waitForJob`: resolves with the job once it has left `active` (completed, failed or
 * archived; a failed job is an answer, not an error). The job record is polled, which alone
 * decides; the event stream only makes the end arrive sooner (a job's status changes in the
 * same transaction as its `job.completed`, `job.failed` or `job.archived` event) and feeds
 * `onEvent`. Whatever the stream had not delivered by the end is read from the JSON list, so
 * `onEvent` sees the whole transcript, without gaps or repeats, even when the stream fails.
 */
import type {
  AgentJob,
  CallOptions,
  EventsOptions,
  FollowEventsOptions,
  JobEvent,
  WaitForJobOptions,
} from './types.ts';

const DEFAULT_POLL_MS = 5_000;
const EVENTS_PAGE = 500;
const ENDING_EVENTS = new Set(['job.completed', 'job.failed', 'job.archived']);

/** The client calls waitForJob is built on. */
export interface WaitDependencies {
  getJob(options: CallOptions): Promise<AgentJob>;
  events(options: EventsOptions): Promise<JobEvent[]>;
  followEvents(options: FollowEventsOptions): AsyncIterable<JobEvent>;
}

export async function waitForJob(deps: WaitDependencies, options: WaitForJobOptions = {}): Promise<AgentJob> {
  const { signal, onUpdate, onEvent } = options;
  let lastEventId = options.eventsAfter;
  const deliver = (event: JobEvent) => {
    if (lastEventId !== undefined && event.id <= lastEventId) return;
    lastEventId = event.id;
    onEvent?.(event);
  };
  /** Reads the transcript after the last delivered event from the JSON list, page by page. */
  const drain = async () => {
    for (;;) {
      const page = await deps.events({ after: lastEventId, limit: EVENTS_PAGE, signal });
      for (const event of page) deliver(event);
      if (page.length < EVENTS_PAGE) return;
    }
  };

  let job = await deps.getJob({ signal });
  onUpdate?.(job);
  if (job.status === 'active') {
    const stream = new AbortController();
    const stopStream = () => stream.abort(signal?.reason);
    signal?.addEventListener('abort', stopStream, { once: true });
    const waker = createWaker();
    let streamFailed = false;
    const following = (async () => {
      try {
        for await (const event of deps.followEvents({ after: lastEventId, signal: stream.signal })) {
          deliver(event);
          if (ENDING_EVENTS.has(event.type)) waker.wake();
        }
      } catch {
        // The stream is an accelerator: without it, polling alone (plus `drain`) does the job.
        streamFailed = !stream.signal.aborted;
      }
    })();
    try {
      while (job.status === 'active') {
        await waker.sleep(options.pollIntervalMs ?? DEFAULT_POLL_MS, signal);
        if (streamFailed && onEvent) await drain();
        const next = await deps.getJob({ signal });
        if (next.status !== job.status || next.updatedAt !== job.updatedAt) onUpdate?.(next);
        job = next;
      }
    } finally {
      signal?.removeEventListener('abort', stopStream);
      stream.abort();
      await following;
    }
  }
  if (onEvent) await drain();
  return job;
}

/**
 * A sleep that `wake()` cuts short. A wake-up that comes while nobody sleeps (during a poll)
 * is kept, and the next sleep returns at once.
 */
function createWaker() {
  let pending = false;
  let cut: (() => void) | undefined;
  return {
    wake() {
      pending = true;
      cut?.();
    },
    async sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
      if (!pending) {
        await new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          const settle = (error?: unknown) => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            cut = undefined;
            if (error === undefined) resolve();
            else reject(error);
          };
          const onAbort = () => settle(signal!.reason);
          const timer = setTimeout(() => settle(), ms);
          signal?.addEventListener('abort', onAbort, { once: true });
          cut = () => settle();
        });
      }
      pending = false;
    },
  };
}
