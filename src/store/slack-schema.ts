/** The Slack app's tables (docs/slack.mdx; migration 0021). */

export interface SlackTables {
  slack_links: SlackLinkTable;
  slack_events: SlackEventTable;
  slack_threads: SlackThreadTable;
}

/** A Slack channel linked to a project: mentions there start jobs on it. */
export interface SlackLinkTable {
  channel_id: string;
  project_id: string;
  /** Who linked it: `cli`, `dashboard:<email>` or `slack:<user id>`. */
  linked_by: string;
  created_at: string;
}

/** A verified Slack event, stored before it is acknowledged and processed in the background. */
export interface SlackEventTable {
  id: string;
  /** Slack's `event_id`: unique, so that retries store nothing. */
  event_id: string;
  /** The inner event's type (`app_mention`). */
  event_type: string | null;
  /** The envelope as Slack sent it (JSON text). */
  body: string;
  received_at: string;
  /** A process processing it holds it until then; another may take it afterwards (a crash). */
  claimed_until: string | null;
  processed_at: string | null;
  /** What became of it: `job: job_…`, `follow-up: job_…`, `ignored: <why>`, `failed: <code>`. */
  result: string | null;
}

/** The thread a job answers in, and its one status message. */
export interface SlackThreadTable {
  id: string;
  channel_id: string;
  /** The thread's parent message ts. */
  thread_ts: string;
  project_id: string;
  job_id: string;
  /** The Slack event that opened the thread (its job's creation). */
  event_id: string;
  /** The status message's ts, once posted. */
  status_ts: string | null;
  /** The text last posted (null before the first post). */
  last_status: string | null;
  /** The job's `updated_at` the status message reflects (null: not posted yet). */
  seen_job_update: string | null;
  created_at: string;
  updated_at: string;
}
