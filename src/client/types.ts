/**
 * The shapes the client sends and receives. They come from the server's own zod schemas
 * (the ones that validate requests and generate `/openapi.json`) through type-only imports:
 * Node erases them, so the client loads no server module at run time.
 */
import type { z } from 'zod';
import type { AutomationInput, AutomationRun } from '../automations/automation.ts';
import type { Problem } from '../http/problem.ts';
import type { AgentJob, JobStatus } from '../jobs/agent-job.ts';
import type { JobEvent } from '../jobs/events.ts';
import type { Citation, JobMode } from '../jobs/job-mode.ts';
import type { createJobBody, messageBody } from '../jobs/requests.ts';

export type { Automation, AutomationInput, AutomationRun, RunChange } from '../automations/automation.ts';
export type { AgentJob, Citation, JobEvent, JobMode, JobStatus, Problem };

/** Body of `PATCH /v2/agent/{projectId}/automations/{id}`: any of the automation's fields (a trigger is replaced whole). */
export type AutomationUpdateInput = Partial<AutomationInput>;

/** One page of `GET /v2/agent/{projectId}/automations/{id}/runs`. */
export interface AutomationRunPage {
  /** Newest first. */
  runs: AutomationRun[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

/** The answer of `POST /v2/agent/{projectId}/automations/{id}/trigger`. */
export interface AutomationTriggered {
  automationId: string;
  runId: string;
  jobId: string;
}

/** Body of `POST /v2/agent/{projectId}/job`: `prompt`, plus the optional `ref`, `model`, `draft`, `changes` and `mode`. */
export type CreateJobInput = z.input<ReturnType<typeof createJobBody>>;

/** One code change a job documents (`changes` of create and message): a pull request, a commit or a range. */
export type ChangeInput = NonNullable<CreateJobInput['changes']>[number];

/** Body of `POST /v2/agent/{projectId}/job/{id}/message`: the follow-up `prompt`, and `changes`. */
export type MessageInput = z.input<ReturnType<typeof messageBody>>;

/** One page of `GET /v2/agent/{projectId}/jobs`. */
export interface JobPage {
  /** Newest first. */
  jobs: AgentJob[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

/** Options every call accepts. */
export interface CallOptions {
  /** Aborts the call (and its retries); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Options of the calls that create work (a job or a follow-up). */
export interface WriteOptions extends CallOptions {
  /**
   * Sent as `Idempotency-Key`: a repeat with the same key and body within 24 hours returns the
   * original response and creates nothing. With a key the call is also retried after a dropped
   * connection, a 429 or a 503; without one it is never retried.
   */
  idempotencyKey?: string;
}

/** Query of `listJobs`. */
export interface ListJobsOptions extends CallOptions {
  /** Only jobs in this state. */
  status?: JobStatus;
  /** Jobs per page, 1 to 100 (server default 20). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** Options of `iterateJobs`. */
export interface IterateJobsOptions extends CallOptions {
  /** Only jobs in this state. */
  status?: JobStatus;
  /** Jobs fetched per request, 1 to 100 (default 100). */
  pageSize?: number;
}

/** Query of `events`. */
export interface EventsOptions extends CallOptions {
  /** Only events with a greater id (default: from the start). */
  after?: number;
  /** Events per request, 1 to 1000 (server default 500). */
  limit?: number;
}

/** Options of `followEvents`. */
export interface FollowEventsOptions extends CallOptions {
  /** Start after this event id (default: the whole transcript, then live events). */
  after?: number;
  /** Wait before reconnecting after a dropped stream, in ms (default: the server's `retry:` hint, else 1000). */
  reconnectDelayMs?: number;
  /** Reconnections in a row that deliver no event before the iterator gives up with the last error (default 10). */
  maxReconnects?: number;
  /** A stream silent this long (ms) counts as dropped; the server sends a keep-alive every 15 s (default 45000). */
  idleTimeoutMs?: number;
}

/** Options of `waitForJob`. */
export interface WaitForJobOptions extends CallOptions {
  /** Called with the job record first, then each time its `status` or `updatedAt` changes. */
  onUpdate?: (job: AgentJob) => void;
  /**
   * Called with each transcript event, oldest first, none twice and none left out, until the job
   * has left `active`. Without it no event is read except to notice the end sooner.
   */
  onEvent?: (event: JobEvent) => void;
  /** Only events with a greater id go to `onEvent` (default: the whole transcript). */
  eventsAfter?: number;
  /** The job is polled this often (ms) besides the event stream, which only makes the end arrive sooner (default 5000). */
  pollIntervalMs?: number;
}
