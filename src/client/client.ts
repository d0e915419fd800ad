/**
 * The typed client of the docwright HTTP API (docs/api/overview.mdx): one method per endpoint, an iterator
 * over every page of the job list, the transcript as a live event stream, and `waitForJob`.
 *
 *   const docwright = createClient({ baseUrl: 'https://docwright.example.com', apiKey });
 *   const job = await docwright.createJob(projectId, { prompt: 'Document the --verbose flag' });
 *   const done = await docwright.waitForJob(projectId, job.id, { onEvent: (e) => console.log(e.type) });
 */

import { createTransport } from './http.ts';
import { followEventStream } from './job-event-reader.ts';
import type {
  AgentJob,
  Automation,
  AutomationInput,
  AutomationRunPage,
  AutomationTriggered,
  AutomationUpdateInput,
  CallOptions,
  ChangeInput,
  CreateJobInput,
  EventsOptions,
  FollowEventsOptions,
  IterateJobsOptions,
  JobEvent,
  JobPage,
  ListJobsOptions,
  MessageInput,
  WaitForJobOptions,
  WriteOptions,
} from './types.ts';
import { waitForJob } from './wait.ts';

/** How to reach the API. */
export interface ClientOptions {
  /** The server's base URL, e.g. `https://docwright.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** A project's admin API key (`dwk_…`), sent as `Authorization: Bearer`. It never appears in an error. */
  apiKey: string;
  /** The fetch to use (default: the global `fetch`). */
  fetch?: typeof fetch;
  /** Time limit per attempt in ms: until the body is read, or for an event stream until it opens (default 30000). */
  timeoutMs?: number;
  /**
   * How many times a request is sent again after a 429, a 503 or a missing response (default 2;
   * 0 disables). Only GETs, archives and POSTs with an `idempotencyKey` are ever retried.
   */
  retries?: number;
  /** Longest wait before one retry, in ms; a `Retry-After` beyond it fails at once with `retryAfter` set (default 30000). */
  maxRetryDelayMs?: number;
  /** First back-off in ms when the server gave no `Retry-After`; doubles with each retry (default 500). */
  retryBaseDelayMs?: number;
}

export type DocwrightClient = ReturnType<typeof createClient>;

const seg = encodeURIComponent;
const jobsPath = (projectId: string) => `/v2/agent/${seg(projectId)}`;
const jobPath = (projectId: string, id: string) => `${jobsPath(projectId)}/job/${seg(id)}`;
const automationPath = (projectId: string, id: string) => `${jobsPath(projectId)}/automations/${seg(id)}`;

export function createClient(options: ClientOptions) {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new TypeError('baseUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('baseUrl must be an absolute http(s) URL');
  }
  if (typeof options.apiKey !== 'string' || options.apiKey.length === 0) {
    throw new TypeError('apiKey is required');
  }
  const apiKey = options.apiKey;
  const transport = createTransport({
    baseUrl: url.href,
    apiKey,
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? 30_000,
    retry: {
      attempts: (options.retries ?? 2) + 1,
      baseDelayMs: options.retryBaseDelayMs ?? 500,
      maxDelayMs: options.maxRetryDelayMs ?? 30_000,
    },
  });

  const client = {
    /** `POST /v2/agent/{projectId}/job`: starts a job; it is `active` until a worker has run it. */
    createJob(projectId: string, input: CreateJobInput, call: WriteOptions = {}): Promise<AgentJob> {
      return transport.json({
        method: 'POST',
        path: `${jobsPath(projectId)}/job`,
        body: input,
        idempotencyKey: call.idempotencyKey,
        signal: call.signal,
      });
    },

    /** `GET /v2/agent/{projectId}/job/{id}`. */
    getJob(projectId: string, id: string, call: CallOptions = {}): Promise<AgentJob> {
      return transport.json({ method: 'GET', path: jobPath(projectId, id), signal: call.signal });
    },

    /** `GET /v2/agent/{projectId}/jobs`: one page, newest first. */
    listJobs(projectId: string, query: ListJobsOptions = {}): Promise<JobPage> {
      const { status, limit, cursor, signal } = query;
      return transport.json({
        method: 'GET',
        path: `${jobsPath(projectId)}/jobs`,
        query: { status, limit, cursor },
        signal,
      });
    },

    /** Every job of the project, newest first, fetched page by page as the loop asks for more. */
    async *iterateJobs(projectId: string, query: IterateJobsOptions = {}): AsyncGenerator<AgentJob, void> {
      let cursor: string | undefined;
      do {
        const page = await client.listJobs(projectId, {
          status: query.status,
          limit: query.pageSize ?? 100,
          cursor,
          signal: query.signal,
        });
        yield* page.jobs;
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
    },

    /** `POST /v2/agent/{projectId}/job/{id}/message`: a follow-up on the same branch and pull request. */
    sendMessage(
      projectId: string,
      id: string,
      input: MessageInput,
      call: WriteOptions = {},
    ): Promise<AgentJob> {
      return transport.json({
        method: 'POST',
        path: `${jobPath(projectId, id)}/message`,
        body: input,
        idempotencyKey: call.idempotencyKey,
        signal: call.signal,
      });
    },

    /**
     * `POST /v2/agent/{projectId}/job/{id}/retry` **(extension)**: runs a `failed` job's last
     * instruction again on the same job and branch; 409 `job-not-failed` for a completed job.
     */
    retryJob(projectId: string, id: string, call: WriteOptions = {}): Promise<AgentJob> {
      return transport.json({
        method: 'POST',
        path: `${jobPath(projectId, id)}/retry`,
        body: {},
        idempotencyKey: call.idempotencyKey,
        signal: call.signal,
      });
    },

    /** `POST /v2/agent/{projectId}/job/{id}/archive`: idempotent; cancels an `active` job's run. */
    archiveJob(projectId: string, id: string, call: CallOptions = {}): Promise<AgentJob> {
      return transport.json({
        method: 'POST',
        path: `${jobPath(projectId, id)}/archive`,
        idempotent: true,
        signal: call.signal,
      });
    },

    /** `GET /v2/agent/{projectId}/job/{id}/events`: one page of the transcript, oldest first. */
    async events(projectId: string, id: string, query: EventsOptions = {}): Promise<JobEvent[]> {
      const { after, limit, signal } = query;
      const page = await transport.json<{ events: JobEvent[] }>({
        method: 'GET',
        path: `${jobPath(projectId, id)}/events`,
        query: { after, limit },
        signal,
      });
      return page.events;
    },

    /**
     * The transcript as it is written: past events, then live ones, each once, reconnecting
     * with `Last-Event-ID` when the stream drops. It never ends by itself: stop it with
     * `signal` or `break`, or use `waitForJob` with `onEvent` to stop when the job ends.
     */
    followEvents(
      projectId: string,
      id: string,
      follow: FollowEventsOptions = {},
    ): AsyncGenerator<JobEvent, void> {
      return followEventStream(transport, `${jobPath(projectId, id)}/events`, apiKey, follow);
    },

    /** Resolves with the job once it is no longer `active` (a failed job resolves too). */
    waitForJob(projectId: string, id: string, wait: WaitForJobOptions = {}): Promise<AgentJob> {
      return waitForJob(
        {
          getJob: (call) => client.getJob(projectId, id, call),
          events: (query) => client.events(projectId, id, query),
          followEvents: (follow) => client.followEvents(projectId, id, follow),
        },
        wait,
      );
    },

    /** `GET /v2/agent/{projectId}/automations` **(extension)**: newest first. */
    async listAutomations(projectId: string, call: CallOptions = {}): Promise<Automation[]> {
      const page = await transport.json<{ automations: Automation[] }>({
        method: 'GET',
        path: `${jobsPath(projectId)}/automations`,
        signal: call.signal,
      });
      return page.automations;
    },

    /** `POST /v2/agent/{projectId}/automations` **(extension)**. */
    createAutomation(projectId: string, input: AutomationInput, call: CallOptions = {}): Promise<Automation> {
      return transport.json({
        method: 'POST',
        path: `${jobsPath(projectId)}/automations`,
        body: input,
        signal: call.signal,
      });
    },

    /** `GET /v2/agent/{projectId}/automations/{id}` **(extension)**. */
    getAutomation(projectId: string, id: string, call: CallOptions = {}): Promise<Automation> {
      return transport.json({ method: 'GET', path: automationPath(projectId, id), signal: call.signal });
    },

    /** `PATCH /v2/agent/{projectId}/automations/{id}` **(extension)**: enable, disable, rename… */
    updateAutomation(
      projectId: string,
      id: string,
      input: AutomationUpdateInput,
      call: CallOptions = {},
    ): Promise<Automation> {
      return transport.json({
        method: 'PATCH',
        path: automationPath(projectId, id),
        body: input,
        idempotent: true,
        signal: call.signal,
      });
    },

    /** `DELETE /v2/agent/{projectId}/automations/{id}` **(extension)**: the automation and its runs. */
    deleteAutomation(projectId: string, id: string, call: CallOptions = {}): Promise<Automation> {
      return transport.json({ method: 'DELETE', path: automationPath(projectId, id), signal: call.signal });
    },

    /** `GET /v2/agent/{projectId}/automations/{id}/runs` **(extension)**: one page, newest first. */
    listAutomationRuns(
      projectId: string,
      id: string,
      query: { limit?: number; cursor?: string; signal?: AbortSignal } = {},
    ): Promise<AutomationRunPage> {
      return transport.json({
        method: 'GET',
        path: `${automationPath(projectId, id)}/runs`,
        query: { limit: query.limit, cursor: query.cursor },
        signal: query.signal,
      });
    },

    /**
     * `POST /v2/agent/{projectId}/automations/{id}/trigger` **(extension)**: runs it now (with
     * `changes`, when given); counts against the rate limit.
     */
    triggerAutomation(
      projectId: string,
      id: string,
      input: { changes?: ChangeInput[] } = {},
      call: CallOptions = {},
    ): Promise<AutomationTriggered> {
      return transport.json({
        method: 'POST',
        path: `${automationPath(projectId, id)}/trigger`,
        body: input,
        signal: call.signal,
      });
    },
  };
  return client;
}
