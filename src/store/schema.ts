import type { Generated, Insertable, Selectable } from 'kysely';

/**
 * Table shapes as Kysely sees them. Times are ISO 8601 UTC strings with
 * milliseconds in both dialects: they sort as text, read the same everywhere,
 * and need no per-dialect conversion.
 */
export interface Database {
  projects: ProjectTable;
  api_keys: ApiKeyTable;
  jobs: JobTable;
  job_runs: JobRunTable;
  job_events: JobEventTable;
  idempotency_keys: IdempotencyKeyTable;
  rate_limit_uses: RateLimitUseTable;
  operators: OperatorTable;
  sessions: SessionTable;
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

/** A dashboard account (SPEC §10). */
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

export type ProjectRow = Selectable<ProjectTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type JobRow = Selectable<JobTable>;
export type JobRunRow = Selectable<JobRunTable>;
export type JobEventRow = Selectable<JobEventTable>;
export type NewJob = Insertable<JobTable>;
export type OperatorRow = Selectable<OperatorTable>;
export type SessionRow = Selectable<SessionTable>;
