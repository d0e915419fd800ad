/**
 * The dispatcher's leases on deliveries, as job runs have them (src/jobs/queue/claim.ts): a
 * delivery is claimed with a lease, the lease is renewed while the POST is in flight, and a
 * delivery whose dispatcher died is claimed again once its lease has expired — so a message
 * is sent at least once across crashes. Every write is conditional on still holding the lease.
 */

import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Store } from '../store/database.ts';
import type { Database, WebhookDeliveryRow } from '../store/schema.ts';

/**
 * Claims up to `limit` due deliveries (pending ones whose time has come, and abandoned ones),
 * fairly across endpoints: no endpoint gets more than `perEndpoint` in flight (counting every
 * dispatcher's live leases), and claims go round the endpoints: a delivery that would be an
 * endpoint's first in flight before any that would be a second, first attempts before retries,
 * then the oldest. So an endpoint with a backlog, or one that hangs until the time limit, cannot
 * take every slot from the others. Dispatchers claiming at the same instant do not see each
 * other's claims: the bound is exact for one, and each of them may add up to `perEndpoint`.
 */
export async function claimDueDeliveries(
  store: Store,
  options: { owner: string; now: Date; leaseMs: number; limit: number; perEndpoint: number },
): Promise<WebhookDeliveryRow[]> {
  const now = options.now.toISOString();
  const until = new Date(options.now.getTime() + options.leaseMs).toISOString();
  // PostgreSQL: rival dispatchers skip each other's rows instead of waiting on them.
  // SQLite: the statement runs under the database write lock.
  const lock = store.dialect === 'postgres' ? sql`for update of d skip locked` : sql``;
  const { rows } = await sql<WebhookDeliveryRow>`
    with busy as (
      select endpoint_id, count(*) as sending from webhook_deliveries
       where status = 'sending' and lease_expires_at >= ${now}
       group by endpoint_id),
    due as (
      select id, next_attempt_at, attempts,
             -- The delivery's place at its endpoint, counting those in flight there.
             row_number() over (partition by endpoint_id order by next_attempt_at, id)
               + coalesce((select sending from busy where busy.endpoint_id = w.endpoint_id), 0) as turn
        from webhook_deliveries w
       where (status = 'pending' and next_attempt_at <= ${now})
          or (status = 'sending' and lease_expires_at < ${now}))
    update webhook_deliveries
       set status = 'sending', attempts = attempts + 1,
           lease_owner = ${options.owner}, lease_expires_at = ${until}, updated_at = ${now}
     where id in (
       select d.id from webhook_deliveries d join due on due.id = d.id
        where due.turn <= ${options.perEndpoint}
        order by due.turn, due.attempts > 0, due.next_attempt_at
        limit ${options.limit}
        ${lock})
    returning *`.execute(store.db);
  return rows;
}

/**
 * Whether any delivery is due that a claim would take (its endpoint has room: see
 * `claimDueDeliveries`): a read, where claiming is an UPDATE that takes SQLite's write lock even
 * when it changes nothing (see WebhookDispatcher's wake-ups).
 */
export async function anyDeliveryDue(db: Kysely<Database>, at: Date, perEndpoint: number): Promise<boolean> {
  const { rows } = await db.executeQuery(deliveryDue(db, { now: at.toISOString(), perEndpoint }));
  return rows.length > 0;
}

const deliveryDue = compiledQuery<{ now: string; perEndpoint: number }>(['now', 'perEndpoint'], (db, p) =>
  sql`
    with full_endpoints as (
      select endpoint_id from webhook_deliveries
       where status = 'sending' and lease_expires_at >= ${p.now}
       group by endpoint_id
      having count(*) >= ${p.perEndpoint})
    select 1 from webhook_deliveries
     where ((status = 'pending' and next_attempt_at <= ${p.now}) or (status = 'sending' and lease_expires_at < ${p.now}))
       and endpoint_id not in (select endpoint_id from full_endpoints)
     limit 1`.compile(db),
);

/** Extends the leases `owner` holds on `ids`; returns the ids still held. */
export async function renewDeliveryLeases(
  db: Kysely<Database>,
  options: { owner: string; ids: string[]; until: Date },
): Promise<Set<string>> {
  if (options.ids.length === 0) return new Set();
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ lease_expires_at: options.until.toISOString() })
    .where('id', 'in', options.ids)
    .where('lease_owner', '=', options.owner)
    .where('status', '=', 'sending')
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Hands deliveries back at shutdown, due at once and without counting the interrupted attempt. */
export async function releaseDeliveries(
  db: Kysely<Database>,
  options: { owner: string; ids: string[]; now: Date },
): Promise<void> {
  if (options.ids.length === 0) return;
  const at = options.now.toISOString();
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'pending',
      attempts: eb('attempts', '-', 1),
      next_attempt_at: at,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: at,
    }))
    .where('id', 'in', options.ids)
    .where('lease_owner', '=', options.owner)
    .where('status', '=', 'sending')
    .execute();
}

/** What one attempt came to. */
export interface AttemptRecord {
  deliveryId: string;
  owner: string;
  at: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  /** The delivery's next state: done, failed for good, or due again at `nextAttemptAt`. */
  next: { status: 'succeeded' | 'failed' } | { status: 'pending'; nextAttemptAt: Date };
}

/**
 * Records an attempt in the history and moves the delivery on, in one transaction, only while
 * `owner` still holds it. False (and nothing written) when the lease was lost meanwhile.
 */
export async function recordAttempt(db: Kysely<Database>, record: AttemptRecord): Promise<boolean> {
  const at = record.at.toISOString();
  return db.transaction().execute(async (trx) => {
    const moved = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: record.next.status,
        next_attempt_at: record.next.status === 'pending' ? record.next.nextAttemptAt.toISOString() : null,
        lease_owner: null,
        lease_expires_at: null,
        last_attempt_at: at,
        last_status_code: record.statusCode,
        last_error: record.error,
        updated_at: at,
      })
      .where('id', '=', record.deliveryId)
      .where('lease_owner', '=', record.owner)
      .where('status', '=', 'sending')
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) return false;
    await trx
      .insertInto('webhook_attempts')
      .values({
        delivery_id: record.deliveryId,
        attempted_at: at,
        status_code: record.statusCode,
        error: record.error,
        response_body: record.responseBody,
        duration_ms: record.durationMs,
      })
      .execute();
    return true;
  });
}
