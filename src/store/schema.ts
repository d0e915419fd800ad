import type { Generated, Insertable, Selectable } from 'kysely';
import type { AutomationTables } from './automation-schema.ts';
import type { CommentTables } from './comment-schema.ts';
import type { SlackTables } from './slack-schema.ts';

/**
 * Table shapes as Kysely sees them. Times are ISO 8601 UTC strings with
 * milliseconds in both dialects: they sort as text, read the same everywhere,
 * and need no per-dialect conversion.
 */
export interface Database extends AutomationTables, SlackTables, CommentTables {
  projects: ProjectTable;
  api_keys: ApiKeyTable;
  jobs: JobTable;
  job_runs: JobRunTable;
  job_events: JobEventTable;
  idempotency_keys: IdempotencyKeyTable;
  rate_limit_uses: RateLimitUseTable;
  rate_limit_counts: RateLimitCountTable;
  operators: OperatorTable;
  sessions: SessionTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_messages: WebhookMessageTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  sign_in_attempts: SignInAttemptTable;
  sign_in_links: SignInLinkTable;
  run_diffs: RunDiffTable;
  project_usage: ProjectUsageTable;
  head_branches: HeadBranchTable;
  server_processes: ServerProcessTable;
  context_repositories: ContextRepositoryTable;
}

/** A code repository a project's agent reads, never writes (docs/code-context.mdx). */
export interface ContextRepositoryTable {
  project_id: string;
  /** A slug, unique in the project; `docs` is reserved for the project's own repository. */
  name: string;
  /** Normalised as a project's (src/projects/repository.ts). */
  repository: string;
  host: string;
  api_url: string | null;
  /** The branch read by default; null: the repository's default branch. */
  ref: string | null;
  /** JSON mapping each credential's name to its value sealed with the project SecretBox, or null. */
  secrets: string | null;
  /** The secret code hosts sign their webhooks with (docs/automations.mdx), sealed with the project SecretBox. */
  webhook_secret: string;
  created_at: string;
}
export type ContextRepositoryRow = Selectable<ContextRepositoryTable>;

/**
 * A head branch docwright created on a project's repository, recorded when it pushed it: the
 * only existing branches a job may continue (docs/api/mintlify-v1.mdx; src/git/head-branch.ts).
 */
export interface HeadBranchTable {
  project_id: string;
  branch: string;
  /** The job whose run pushed it first. */
  job_id: string;
  created_at: string;
}

/** A running `docwright serve` or `docwright worker` process and its effective settings. */
export interface ServerProcessTable {
  /** `srv_…` */
  id: string;
  host: string;
  pid: number;
  /** 1 when it answers the API and the dashboard (it chooses a new job's default model). */
  serves_api: number;
  /** 1 when it runs jobs and sends webhooks. */
  runs_jobs: number;
  version: string;
  /** JSON: the settings of its environment that commands judge by (process-registry.ts); never a secret. */
  settings: string;
  started_at: string;
  /** Refreshed while the process runs: a row not seen for a while is a process that is gone. */
  seen_at: string;
}

/** Model tokens a project spent in a calendar month (UTC, `YYYY-MM`). */
export interface ProjectUsageTable {
  project_id: string;
  month: string;
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
}

export interface ProjectTable {
  id: string;
  name: string;
  repository: string;
  host: string;
  api_url: string | null;
  ref: string;
  model: string | null;
  /** Uses per rolling hour; null = the server default. */
  rate_limit: number | null;
  /** JSON of the non-secret settings (docsDir, writable, pull request options…). */
  settings: string;
  /** Encrypted JSON of the credentials; null when there are none. */
  secrets: string | null;
  /** The sealed secret of webhooks to `/hooks/{id}/docs` (docs/automations.mdx); null until one is made. */
  docs_webhook_secret: string | null;
  /** JSON array of the check commands operators set (SPEC §19); `[]` (the default) for none. */
  checks: Generated<string>;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyTable {
  id: string;
  project_id: string;
  name: string | null;
  /** Hex SHA-256 of the full key; the key itself is never stored. */
  hash: string;
  last_four: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface JobTable {
  id: string;
  project_id: string;
  status: 'active' | 'completed' | 'archived' | 'failed';
  repository: string;
  ref: string;
  model: string;
  /** 1/0 when the request chose; null = the project's setting. */
  draft: number | null;
  pr_link: string | null;
  branch: string | null;
  summary: string | null;
  error_code: string | null;
  error_message: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  /** JSON: the resolved changes the job documents (src/jobs/changes.ts), `[]` when none. */
  changes: Generated<string>;
  /** JSON: the last verification's report (src/jobs/job-checks.ts), `[]` until a run verifies. */
  checks: Generated<string>;
  /** `edit` changes the docs; `ask` answers a question (src/jobs/job-mode.ts). */
  mode: Generated<'edit' | 'ask'>;
  /** An ask job's last answer; null for edit jobs and until one is given. */
  answer: string | null;
  /** JSON: the answer's citations (src/jobs/job-mode.ts), `[]` for edit jobs. */
  citations: Generated<string>;
}

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** One instruction given to a job: the first prompt, then each follow-up. */
export interface JobRunTable {
  id: string;
  job_id: string;
  project_id: string;
  seq: number;
  prompt: string;
  status: RunStatus;
  /** Claims so far; a lease that expires counts as a failed attempt. */
  attempts: Generated<number>;
  /** The worker holding the run while `running`. */
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** The run's outcome, kept for the history that follow-up runs receive. */
  summary: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  /** JSON: the changes the run documents, as requested (src/jobs/changes.ts); null: none. */
  changes: string | null;
  /** Model turns and tokens the run has spent, over all its attempts (accrued as they happen). */
  steps: Generated<number>;
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
}

export interface JobEventTable {
  id: Generated<number>;
  job_id: string;
  run_id: string | null;
  type: string;
  /** JSON payload. */
  data: string;
  created_at: string;
}

export interface IdempotencyKeyTable {
  project_id: string;
  key: string;
  /** SHA-256 of method, path and body: the same key with another request is refused. */
  fingerprint: string;
  status_code: number;
  body: string;
  location: string | null;
  created_at: string;
}

export interface RateLimitUseTable {
  id: Generated<number>;
  project_id: string;
  used_at: string;
}

/** How many rows of `rate_limit_uses` a project has, expired ones included until they are pruned. */
export interface RateLimitCountTable {
  project_id: string;
  uses: number;
}

/** A dashboard account (docs/dashboard.mdx). */
export interface OperatorTable {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  /** `scrypt$N=…,r=…,p=…$salt$hash` (src/operators/passwords.ts). */
  password_hash: string;
  created_at: string;
  updated_at: string;
  last_sign_in_at: string | null;
  disabled_at: string | null;
}

/** A dashboard sign-in. */
export interface SessionTable {
  /** Hex SHA-256 of the session token; the token itself is never stored. */
  id: string;
  operator_id: string;
  /** Random per-session secret that state-changing forms must echo. */
  csrf_secret: string;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
}

/** Where a project's job events are POSTed (docs/webhooks.mdx). */
export interface WebhookEndpointTable {
  id: string;
  project_id: string;
  url: string;
  description: string | null;
  /** JSON array of the event types sent to this endpoint. */
  events: string;
  /** The `whsec_…` signing secret, sealed with the project SecretBox. */
  secret: string;
  created_at: string;
  updated_at: string;
  /** Set when the endpoint answered 410 Gone or an operator disabled it; nothing is sent then. */
  disabled_at: string | null;
  disabled_reason: string | null;
}

/** One event to report, written in the transaction of the job change it reports. */
export interface WebhookMessageTable {
  /** `msg_…`: the `webhook-id` header, the same on every attempt. */
  id: string;
  project_id: string;
  job_id: string | null;
  type: string;
  /** The exact JSON body sent, so that every attempt sends the same bytes. */
  body: string;
  created_at: string;
}

export type WebhookDeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'failed';

/** A message on its way to one endpoint; claimed with a lease like a job run. */
export interface WebhookDeliveryTable {
  id: string;
  message_id: string;
  endpoint_id: string;
  project_id: string;
  status: WebhookDeliveryStatus;
  /** Attempts since the delivery was created or last re-sent. */
  attempts: Generated<number>;
  /** When a `pending` delivery is due; null once it is final. */
  next_attempt_at: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** One HTTP attempt of a delivery, for the delivery history. */
export interface WebhookAttemptTable {
  id: Generated<number>;
  delivery_id: string;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  /** The start of the response body (at most 1 KiB), for diagnosis. */
  response_body: string | null;
  duration_ms: number;
}

/** A sign-in attempt that failed or is being checked (throttling, docs/dashboard.mdx). */
export interface SignInAttemptTable {
  id: Generated<number>;
  /** Lower-cased, as typed (the account need not exist). */
  email: string;
  /** The client's address. */
  address: string;
  attempted_at: string;
}

/** A one-time link to the dashboard's first-run page (no operator exists yet). */
export interface SignInLinkTable {
  /** Hex SHA-256 of the link's token. */
  id: string;
  created_at: string;
  expires_at: string;
}

/** A run's commit as a unified diff against the job's base (docs/dashboard.mdx Diff). */
export interface RunDiffTable {
  run_id: string;
  job_id: string;
  base_commit: string;
  head_commit: string;
  /** At most 1 MiB; ends with a truncation marker when cut. */
  diff: string;
  truncated: number;
  files: number;
  additions: number;
  deletions: number;
  created_at: string;
}

export type ProjectRow = Selectable<ProjectTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type JobRow = Selectable<JobTable>;
export type JobRunRow = Selectable<JobRunTable>;
export type JobEventRow = Selectable<JobEventTable>;
export type NewJob = Insertable<JobTable>;
export type OperatorRow = Selectable<OperatorTable>;
export type SessionRow = Selectable<SessionTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveryTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptTable>;
export type RunDiffRow = Selectable<RunDiffTable>;
