import { type Kysely, sql, type Transaction } from 'kysely';
import { DocwrightError, type RateLimitState } from '../errors.ts';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Database } from '../store/schema.ts';

/** The rolling window of docs/api/rate-limits.mdx. */
export const RATE_LIMIT_WINDOW_SECONDS = 3600;
const WINDOW_MS = RATE_LIMIT_WINDOW_SECONDS * 1000;

export type { RateLimitState };

/** Uses the project has stored, those of them that have left the window, and the oldest still in it. */
interface WindowRow {
  stored: number | string | null;
  expired: number | string;
  oldest: string | null;
}

/**
 * The window in three index lookups, whatever the project's limit: the stored uses are counted
 * in `rate_limit_counts` (by triggers) rather than here, and only uses that left the window since
 * the last create are counted here (the next create prunes them).
 */
async function readWindow(db: Kysely<Database>, projectId: string, now: Date) {
  const windowStart = windowStartOf(now);
  const { rows } = await db.executeQuery(windowOf(db, { projectId, windowStart }));
  const row = rows[0]!;
  const expired = Number(row.expired);
  return {
    count: Number(row.stored ?? 0) - expired,
    oldest: row.oldest ? Date.parse(row.oldest) : undefined,
    expired,
    windowStart,
  };
}

// Compiled once: building it with the query builder on every create took 12 µs.
const windowOf = compiledQuery<{ projectId: string; windowStart: string }, WindowRow>(
  ['projectId', 'windowStart'],
  (db, p) =>
    sql<WindowRow>`
      select (select uses from rate_limit_counts where project_id = ${p.projectId}) as stored,
             (select count(*) from rate_limit_uses
               where project_id = ${p.projectId} and used_at <= ${p.windowStart}) as expired,
             (select min(used_at) from rate_limit_uses
               where project_id = ${p.projectId} and used_at > ${p.windowStart}) as oldest`.compile(db),
);

const insertUse = compiledQuery<{ projectId: string; at: string }>(['projectId', 'at'], (db, p) =>
  sql`insert into rate_limit_uses (project_id, used_at) values (${p.projectId}, ${p.at})`.compile(db),
);

const secondsUntilFree = (oldest: number | undefined, now: Date) =>
  oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + WINDOW_MS - now.getTime()) / 1000));

/** The start of the window that ends at `now` (uses at or before it no longer count). */
export const windowStartOf = (now: Date): string => new Date(now.getTime() - WINDOW_MS).toISOString();

/** The `rate-limited` error of a project whose `count` uses fill its window (`oldest`: the first of them). */
export function rateLimitedError(limit: number, oldest: number | undefined, now: Date): DocwrightError {
  const state = { limit, remaining: 0, resetSeconds: secondsUntilFree(oldest, now) };
  return new DocwrightError(
    'rate-limited',
    `rate limit of ${limit} uses per hour reached for this project; retry in ${state.resetSeconds} s`,
    { retryAfter: state.resetSeconds, rateLimit: state },
  );
}

/** The state after recording one use at `now`, `count` uses having been in the window before it. */
export function stateAfterUse(
  limit: number,
  count: number,
  oldest: number | undefined,
  now: Date,
): RateLimitState {
  return {
    limit,
    remaining: limit - count - 1,
    resetSeconds: secondsUntilFree(oldest ?? now.getTime(), now),
  };
}

/** The state without using anything (for responses that count nothing). */
export async function peekRateLimit(
  db: Kysely<Database>,
  projectId: string,
  limit: number,
  now: Date,
): Promise<RateLimitState> {
  const { count, oldest } = await readWindow(db, projectId, now);
  return { limit, remaining: Math.max(0, limit - count), resetSeconds: secondsUntilFree(oldest, now) };
}

/**
 * Records one use, or throws `rate-limited` (recording nothing). Must run in
 * the transaction that creates the work, after the project is locked
 * (`lockProject`): the count and the insert are then one atomic step for
 * every process sharing the database, so of 101 simultaneous creates exactly
 * 100 succeed.
 */
export async function consumeRateLimit(
  trx: Transaction<Database>,
  projectId: string,
  limit: number,
  now: Date,
): Promise<RateLimitState> {
  const { count, oldest, expired, windowStart } = await readWindow(trx, projectId, now);
  if (count >= limit) throw rateLimitedError(limit, oldest, now);
  // Uses that left the window are dead weight; pruning keeps the table at most `limit` rows a project.
  if (expired > 0) {
    await trx
      .deleteFrom('rate_limit_uses')
      .where('project_id', '=', projectId)
      .where('used_at', '<=', windowStart)
      .execute();
  }
  // Counted in rate_limit_counts by the database's triggers (migration 0006), as is the delete above.
  await trx.executeQuery(insertUse(trx, { projectId, at: now.toISOString() }));
  return stateAfterUse(limit, count, oldest, now);
}
