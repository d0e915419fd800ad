import type { Generated } from 'kysely';

/**
 * The tables of pull request comments (docs/pull-request-comments.mdx; migration 0020): one row per
 * comment that asked docwright for a follow-up, unique per (host, repository, comment id) so that
 * a comment starts at most one follow-up however often and by whichever way it arrives; and the
 * poll's cursor per pull request.
 */

export interface CommentTables {
  comment_follow_ups: CommentFollowUpTable;
  comment_poll_cursors: CommentPollCursorTable;
}

/** `waiting`: claimed, its follow-up not queued yet (the job was running); `started`; `refused`; `done`. */
export type CommentFollowUpStatus = 'waiting' | 'started' | 'refused' | 'done';

export interface CommentFollowUpTable {
  /** `cfu_…` */
  id: string;
  project_id: string;
  job_id: string;
  /** `host|repository key|comment id`: the unique claim. */
  comment_key: string;
  host: string;
  /** The pull/merge request's number (GitLab: its iid). */
  number: number;
  comment_id: string;
  /** JSON of where replies go (conversation.ts `ReplyTarget`). */
  reply_to: string;
  author: string;
  /** The follow-up's instruction, built from the comment (mention removed). */
  prompt: string;
  status: CommentFollowUpStatus;
  /** The run the follow-up queued (its `seq`), once started. */
  run_seq: number | null;
  /** Why it could not start (`refused`): the error's code and message. */
  refusal_code: string | null;
  refusal_message: string | null;
  started_replied_at: string | null;
  outcome_replied_at: string | null;
  /** Failed attempts to post a reply, and the last failure (redacted). */
  reply_failures: Generated<number>;
  last_error: string | null;
  /** While a process posts a reply: no other posts it before then (a crash lets it go when it passes). */
  reply_lease_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface CommentPollCursorTable {
  job_id: string;
  project_id: string;
  /** ISO 8601: comments updated at or after this time are read next. */
  since: string;
  updated_at: string;
}
