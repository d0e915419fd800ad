/**
 * The comments that asked for follow-ups (migration 0020): the claim that makes a comment start
 * one follow-up at most — a row unique by (host, repository, comment id), whichever way and however
 * often the comment arrives, at however many processes — and the state of its replies.
 */
import type { Kysely, Transaction } from 'kysely';
import type { ReplyTarget } from '../../git/hosts/index.ts';
import { repositoryKey } from '../../git/hosts/index.ts';
import { newCommentFollowUpId } from '../../ids.ts';
import type { CommentFollowUpTable } from '../../store/comment-schema.ts';
import type { Database } from '../../store/schema.ts';

export type FollowUpRow = Omit<CommentFollowUpTable, 'reply_failures'> & { reply_failures: number };

/** After this many failed attempts a reply is given up (the last error stays on the row). */
export const MAX_REPLY_FAILURES = 5;
/** How long a process holds a reply it is posting. */
export const REPLY_LEASE_MS = 60_000;

export interface NewFollowUp {
  projectId: string;
  jobId: string;
  host: string;
  repository: string;
  number: number;
  commentId: string;
  replyTo: ReplyTarget;
  author: string;
  prompt: string;
}

/** The claim's key: the same comment is the same key whichever way it came. */
export const commentKey = (host: string, repository: string, commentId: string) =>
  `${host}|${repositoryKey(repository)}|${commentId}`;

export type FollowUpStore = ReturnType<typeof createFollowUpStore>;

export function createFollowUpStore(db: Kysely<Database>, now: () => Date) {
  const at = () => now().toISOString();
  return {
    async isClaimed(key: string): Promise<boolean> {
      const row = await db
        .selectFrom('comment_follow_ups')
        .select('id')
        .where('comment_key', '=', key)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Claims the comment: the row, `waiting`; undefined when it was claimed before (by anyone). */
    async claim(input: NewFollowUp): Promise<FollowUpRow | undefined> {
      const time = at();
      const row: FollowUpRow = {
        id: newCommentFollowUpId(),
        project_id: input.projectId,
        job_id: input.jobId,
        comment_key: commentKey(input.host, input.repository, input.commentId),
        host: input.host,
        number: input.number,
        comment_id: input.commentId,
        reply_to: JSON.stringify(input.replyTo),
        author: input.author,
        prompt: input.prompt,
        status: 'waiting',
        run_seq: null,
        refusal_code: null,
        refusal_message: null,
        started_replied_at: null,
        outcome_replied_at: null,
        reply_failures: 0,
        last_error: null,
        reply_lease_until: null,
        created_at: time,
        updated_at: time,
      };
      const inserted = await db
        .insertInto('comment_follow_ups')
        .values(row)
        .onConflict((oc) => oc.column('comment_key').doNothing())
        .returning('id')
        .execute();
      return inserted.length === 1 ? row : undefined;
    },

    /**
     * In the transaction that queues the follow-up: `waiting` → `started` with the run's seq.
     * False when another process started it first (the caller then undoes its follow-up).
     */
    async markStarted(trx: Transaction<Database>, id: string, seq: number): Promise<boolean> {
      const result = await trx
        .updateTable('comment_follow_ups')
        .set({ status: 'started', run_seq: seq, updated_at: at() })
        .where('id', '=', id)
        .where('status', '=', 'waiting')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async markRefused(id: string, code: string, message: string): Promise<void> {
      await db
        .updateTable('comment_follow_ups')
        .set({
          status: 'refused',
          refusal_code: code,
          refusal_message: message.slice(0, 2_000),
          updated_at: at(),
        })
        .where('id', '=', id)
        .where('status', '=', 'waiting')
        .execute();
    },

    /** Comments whose job no longer runs, oldest first: they may start now. */
    waiting(limit = 20): Promise<FollowUpRow[]> {
      return db
        .selectFrom('comment_follow_ups as f')
        .innerJoin('jobs as j', 'j.id', 'f.job_id')
        .selectAll('f')
        .where('f.status', '=', 'waiting')
        .where('j.status', '!=', 'active')
        .orderBy('f.created_at')
        .orderBy('f.id')
        .limit(limit)
        .execute() as Promise<FollowUpRow[]>;
    },

    /** Rows with a reply to post (started, refused), oldest first. */
    withReplies(limit = 20): Promise<FollowUpRow[]> {
      return db
        .selectFrom('comment_follow_ups')
        .selectAll()
        .where('status', 'in', ['started', 'refused'])
        .where('reply_failures', '<', MAX_REPLY_FAILURES)
        .where((eb) => eb.or([eb('reply_lease_until', 'is', null), eb('reply_lease_until', '<', at())]))
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute() as Promise<FollowUpRow[]>;
    },

    /** The jobs with follow-ups not done: their events wake the reply loop. */
    async openJobs(): Promise<string[]> {
      const rows = await db
        .selectFrom('comment_follow_ups')
        .select('job_id')
        .distinct()
        .where('status', 'in', ['waiting', 'started', 'refused'])
        .limit(1_000)
        .execute();
      return rows.map((r) => r.job_id);
    },

    /** Takes the row's reply for `REPLY_LEASE_MS`; false when another process holds it. */
    async lease(id: string): Promise<boolean> {
      const time = now();
      const result = await db
        .updateTable('comment_follow_ups')
        .set({ reply_lease_until: new Date(time.getTime() + REPLY_LEASE_MS).toISOString() })
        .where('id', '=', id)
        .where((eb) =>
          eb.or([eb('reply_lease_until', 'is', null), eb('reply_lease_until', '<', time.toISOString())]),
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async replied(id: string, which: 'started' | 'outcome'): Promise<void> {
      const time = at();
      await db
        .updateTable('comment_follow_ups')
        .set(
          which === 'started'
            ? { started_replied_at: time, reply_lease_until: null, updated_at: time }
            : { outcome_replied_at: time, status: 'done', reply_lease_until: null, updated_at: time },
        )
        .where('id', '=', id)
        .execute();
    },

    async replyFailed(id: string, message: string): Promise<void> {
      await db
        .updateTable('comment_follow_ups')
        .set((eb) => ({
          reply_failures: eb('reply_failures', '+', 1),
          last_error: message.slice(0, 2_000),
          reply_lease_until: null,
          updated_at: at(),
        }))
        .where('id', '=', id)
        .execute();
    },

    /** The run a started follow-up queued, with its diff's head commit when it changed files. */
    async runOf(jobId: string, seq: number) {
      return db
        .selectFrom('job_runs as r')
        .leftJoin('run_diffs as d', 'd.run_id', 'r.id')
        .select([
          'r.id',
          'r.status',
          'r.summary',
          'r.error_code',
          'r.error_message',
          'd.head_commit',
          'd.files',
        ])
        .where('r.job_id', '=', jobId)
        .where('r.seq', '=', seq)
        .executeTakeFirst();
    },
  };
}
