/**
 * The Slack threads jobs answer in (docs/slack.mdx): one row per (channel, thread), naming the
 * job its mentions instruct and the one status message the app keeps up to date there. The
 * message is stale when the job's `updated_at` is not the one it was last written for; a process
 * takes the update by changing that mark conditionally, so that two processes never post two
 * status messages or write over each other.
 */
import type { Kysely } from 'kysely';
import { newSlackThreadId } from '../../ids.ts';
import type { Database, JobRow } from '../../store/schema.ts';
import type { SlackThreadTable } from '../../store/slack-schema.ts';

export type SlackThreadRow = SlackThreadTable;

/** A thread whose status message is behind its job, with the job's row. */
export interface StaleThread {
  thread: SlackThreadRow;
  job: JobRow;
}

export type SlackThreads = ReturnType<typeof createSlackThreads>;

export function createSlackThreads(deps: { db: Kysely<Database>; now: () => Date }) {
  const { db } = deps;
  return {
    async find(channelId: string, threadTs: string): Promise<SlackThreadRow | undefined> {
      return db
        .selectFrom('slack_threads')
        .selectAll()
        .where('channel_id', '=', channelId)
        .where('thread_ts', '=', threadTs)
        .executeTakeFirst();
    },

    /** Records the thread of a new job; the thread's existing row when there is one (a retried event). */
    async open(input: {
      channelId: string;
      threadTs: string;
      projectId: string;
      jobId: string;
      eventId: string;
    }) {
      const at = deps.now().toISOString();
      await db
        .insertInto('slack_threads')
        .values({
          id: newSlackThreadId(),
          channel_id: input.channelId,
          thread_ts: input.threadTs,
          project_id: input.projectId,
          job_id: input.jobId,
          event_id: input.eventId,
          status_ts: null,
          last_status: null,
          seen_job_update: null,
          created_at: at,
          updated_at: at,
        })
        .onConflict((oc) => oc.columns(['channel_id', 'thread_ts']).doNothing())
        .execute();
    },

    /** Threads whose status message is behind their job (or not posted yet), oldest first. */
    async stale(limit = 50): Promise<StaleThread[]> {
      const threads = await db
        .selectFrom('slack_threads as t')
        .innerJoin('jobs as j', 'j.id', 't.job_id')
        .selectAll('t')
        .where((eb) =>
          eb.or([eb('t.seen_job_update', 'is', null), eb('t.seen_job_update', '<>', eb.ref('j.updated_at'))]),
        )
        .orderBy('t.updated_at')
        .limit(limit)
        .execute();
      if (threads.length === 0) return [];
      const jobs = await db
        .selectFrom('jobs')
        .selectAll()
        .where(
          'id',
          'in',
          threads.map((t) => t.job_id),
        )
        .execute();
      const byId = new Map(jobs.map((job) => [job.id, job]));
      return threads.flatMap((thread) => {
        const job = byId.get(thread.job_id);
        return job ? [{ thread, job }] : [];
      });
    },

    /**
     * Takes the update of `thread` to the job's `jobUpdatedAt`: true when this process changed the
     * mark (and must write the message), false when another did first.
     */
    async claimUpdate(thread: SlackThreadRow, jobUpdatedAt: string): Promise<boolean> {
      let update = db
        .updateTable('slack_threads')
        .set({ seen_job_update: jobUpdatedAt, updated_at: deps.now().toISOString() })
        .where('id', '=', thread.id);
      update =
        thread.seen_job_update === null
          ? update.where('seen_job_update', 'is', null)
          : update.where('seen_job_update', '=', thread.seen_job_update);
      return (await update.returning('id').execute()).length === 1;
    },

    /** Records what was posted (and the message's ts, after the first post). */
    async posted(threadId: string, text: string, statusTs: string): Promise<void> {
      await db
        .updateTable('slack_threads')
        .set({ last_status: text, status_ts: statusTs, updated_at: deps.now().toISOString() })
        .where('id', '=', threadId)
        .execute();
    },

    /** Gives an update back after Slack refused or failed it: the next pass tries again. */
    async unclaim(threadId: string, previous: string | null): Promise<void> {
      await db
        .updateTable('slack_threads')
        .set({ seen_job_update: previous })
        .where('id', '=', threadId)
        .execute();
    },
  };
}
