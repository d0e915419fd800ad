/**
 * Job polls remembered while the database provably has not changed: on SQLite as the file tells
 * (job-poll-cache.ts), on PostgreSQL as the database's announcements tell
 * (job-poll-cache-postgres.ts). One per process, for the GET job route.
 */
import type { ApiKeyRow, Principal } from '../keys/keys.ts';
import type { Store } from '../store/database.ts';
import type { Signals } from '../store/signals.ts';
import { JobPollCache } from './job-poll-cache.ts';
import { JobPollCachePostgres } from './job-poll-cache-postgres.ts';

/** What the GET job route asks of a poll cache (either database's). */
export interface PollCache {
  token(): Promise<unknown>;
  get(
    token: unknown,
    keyHash: string,
    projectId: string,
    jobId: string,
    at: Date,
  ):
    | { principal: Principal; body: string }
    | undefined
    | Promise<{ principal: Principal; body: string } | undefined>;
  set(token: unknown, keyHash: string, jobId: string, key: ApiKeyRow, body: string): void;
}

export function createJobPolls(deps: {
  store: Pick<Store, 'dialect' | 'changes'>;
  signals: Signals;
}): PollCache {
  return deps.store.dialect === 'postgres' && deps.signals.caughtUp
    ? new JobPollCachePostgres(deps.signals)
    : new JobPollCache(deps.store);
}
