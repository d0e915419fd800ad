import type { Kysely } from 'kysely';
import { z } from 'zod';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Database, JobEventRow } from '../store/schema.ts';

/** One entry of a job's transcript. */
export const jobEventSchema = z.object({
  id: z.number().int().meta({ description: 'Increasing; pass as `after` (or Last-Event-ID) to resume.' }),
  jobId: z.string(),
  runId: z.string().nullable(),
  type: z.string().meta({ description: 'e.g. job.created, job.message, job.archived' }),
  data: z.unknown(),
  createdAt: z.iso.datetime(),
});
export type JobEvent = z.output<typeof jobEventSchema>;

export interface NewEvent {
  jobId: string;
  runId?: string | null;
  type: string;
  data?: unknown;
}

export const toJobEvent = (row: JobEventRow): JobEvent => ({
  id: Number(row.id),
  jobId: row.job_id,
  runId: row.run_id,
  type: row.type,
  data: JSON.parse(row.data),
  createdAt: row.created_at,
});

/** Appends one event (in the caller's transaction, when it passes one). */
export async function appendEvent(db: Kysely<Database>, event: NewEvent, now: Date): Promise<void> {
  await db.executeQuery(
    insertEvent(db, {
      jobId: event.jobId,
      runId: event.runId ?? null,
      type: event.type,
      data: JSON.stringify(event.data ?? {}),
      at: now.toISOString(),
    }),
  );
}

const insertEvent = compiledQuery<{
  jobId: string;
  runId: string | null;
  type: string;
  data: string;
  at: string;
}>(['jobId', 'runId', 'type', 'data', 'at'], (db, p) =>
  db
    .insertInto('job_events')
    .values({ job_id: p.jobId, run_id: p.runId, type: p.type, data: p.data, created_at: p.at })
    .compile(),
);

/** Appends events (in the caller's transaction, when it passes one). */
export async function appendEvents(db: Kysely<Database>, events: NewEvent[], now: Date): Promise<void> {
  if (events.length === 0) return;
  if (events.length === 1) return appendEvent(db, events[0]!, now);
  await db
    .insertInto('job_events')
    .values(
      events.map((e) => ({
        job_id: e.jobId,
        run_id: e.runId ?? null,
        type: e.type,
        data: JSON.stringify(e.data ?? {}),
        created_at: now.toISOString(),
      })),
    )
    .execute();
}

/** Events of a job after `after` (an event id), oldest first. */
export async function listEvents(
  db: Kysely<Database>,
  jobId: string,
  options: { after?: number | undefined; limit: number },
): Promise<JobEvent[]> {
  return (await listEventRows(db, jobId, options)).map(toJobEvent);
}

/** The stored rows of a job's events after `after`, oldest first. */
export async function listEventRows(
  db: Kysely<Database>,
  jobId: string,
  options: { after?: number | undefined; limit: number },
): Promise<JobEventRow[]> {
  let query = db.selectFrom('job_events').selectAll().where('job_id', '=', jobId);
  if (options.after !== undefined) query = query.where('id', '>', options.after);
  return query.orderBy('id').limit(options.limit).execute();
}

/**
 * An event's JSON (the JobEvent shape) straight from its row: the stored `data` is already JSON
 * text, so it is spliced in rather than parsed and serialised again (streams send a lot of it).
 */
export function jobEventJson(row: JobEventRow): string {
  const head = JSON.stringify({
    id: Number(row.id),
    jobId: row.job_id,
    runId: row.run_id,
    type: row.type,
    createdAt: row.created_at,
  });
  return `${head.slice(0, -1)},"data":${row.data}}`;
}
