import type { Transaction } from 'kysely';
import { DocwrightError } from '../errors.ts';
import { isJobId, isProjectId } from '../ids.ts';
import { compileInsert } from '../store/compiled-insert.ts';
import type { Store } from '../store/database.ts';
import { lockProject } from '../store/dialect.ts';
import type { ApiKeyRow, Database, JobRow, ProjectRow, RunDiffRow } from '../store/schema.ts';
import type { Signal } from '../store/signals.ts';
import { parseOrThrow } from '../validation.ts';
import { type AgentJob, newJobRow, toAgentJob } from './agent-job.ts';
import { isOwnHeadBranch } from './branches.ts';
import {
  type ChangeInput,
  type ChangeRequest,
  DOCS_REPOSITORY,
  type JobChange,
  type NamedRepository,
  parseChangeRequests,
  parseJobChanges,
  pendingJobChanges,
  requestedChanges,
} from './changes.ts';
import { postgresCreate } from './create-postgres.ts';
import { latestDiff } from './diffs.ts';
import { appendEvents, type JobEvent, listEvents } from './events.ts';
import { findReplay, type IdempotentRequest, rememberResponse } from './idempotency.ts';
import { cancelRuns } from './queue/cancel.ts';
import { runQueue } from './queue/queue-run.ts';
import { consumeRateLimit, peekRateLimit, type RateLimitState } from './rate-limit.ts';
import {
  createJobBody,
  type ListEventsQuery,
  type ListJobsQuery,
  listEventsQuery,
  listJobsQuery,
  messageBody,
  retryBody,
} from './requests.ts';
import { monthlyTokens, nextMonth, usageMonth } from './usage.ts';
import { enqueueJobMessage } from './webhook-outbox.ts';
import type { WorkResult } from './work-result.ts';

export interface JobServiceOptions {
  store: Store;
  /** Longest prompt in characters after trimming. */
  promptMaxChars: number;
  /** Uses per hour for projects that set no limit. */
  defaultRateLimit: number;
  /** Model for projects that name none. */
  defaultModel?: string | undefined;
  now?: () => Date;
  /** Tells workers and event streams of other processes; called after commits. */
  publish?: (signal: Signal) => Promise<void>;
}

/** Whether a request may name code changes: it names some, or its prompt holds a URL. */
const mayNameChanges = (body: { prompt: string; changes?: ChangeInput[] | undefined }) =>
  (body.changes?.length ?? 0) > 0 || /https?:\/\//i.test(body.prompt);

/** The outcome of a request that creates work (create, follow-up). */
export interface JobPage {
  jobs: AgentJob[];
  nextCursor: string | null;
}

export type JobService = ReturnType<typeof createJobService>;

/**
 * The base a retry runs on when it is not the job's: a job that never pushed a branch has
 * nothing built on its old base, so it takes the project's repository and ref as they are now
 * (after `project update --ref`, which is how a job that failed `ref-not-found` is mended).
 */
function retryBase(
  project: Pick<ProjectRow, 'repository' | 'ref'>,
  job: Pick<JobRow, 'branch' | 'repository' | 'ref'>,
): { repository: string; ref: string } | undefined {
  if (job.branch !== null) return undefined;
  if (job.ref === project.ref && job.repository === project.repository) return undefined;
  return { repository: project.repository, ref: project.ref };
}

/** A job whose values only stand in for parameters (see compileInsert): every column, in INSERT order. */
const JOB_TEMPLATE: JobRow = {
  id: '',
  project_id: '',
  status: 'active',
  repository: '',
  ref: '',
  model: '',
  draft: null,
  pr_link: null,
  branch: null,
  summary: null,
  error_code: null,
  error_message: null,
  input_tokens: null,
  output_tokens: null,
  created_at: '',
  updated_at: '',
  archived_at: null,
  changes: '[]',
  checks: '[]',
  mode: 'edit',
  answer: null,
  citations: '[]',
};

const encodeCursor = (id: string) => Buffer.from(id).toString('base64url');
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString();
  if (!isJobId(id)) {
    throw new DocwrightError('invalid-cursor', 'cursor is not one this server returned', {
      fields: [{ field: 'query.cursor', message: 'is not a cursor this server returned' }],
    });
  }
  return id;
}

export function createJobService(options: JobServiceOptions) {
  const { store } = options;
  const { db, dialect } = store;
  const now = options.now ?? (() => new Date());
  const createSchema = createJobBody(options.promptMaxChars);
  const messageSchema = messageBody(options.promptMaxChars);
  /** Signals are nudges: losing one only delays a wake-up until the next poll. */
  const publish = (signal: Signal) => (options.publish?.(signal) ?? Promise.resolve()).catch(() => {});
  const limitOf = (project: ProjectRow) => project.rate_limit ?? options.defaultRateLimit;
  /**
   * The changes a request names (src/jobs/changes.ts), with the repositories they may name: the
   * project's own and its context repositories. Those are read only when the request names a
   * change or its prompt holds a URL: most creates do neither, and pay no query for it.
   * `listed` is what the AgentJob shows of them until a run resolves them (pendingJobChanges),
   * undefined when the request adds none.
   */
  async function changesOf(
    trx: Transaction<Database>,
    project: ProjectRow,
    body: { prompt: string; changes?: ChangeInput[] | undefined },
    earlier: readonly ChangeRequest[] = [],
    known: readonly JobChange[] = [],
  ): Promise<{ changes: ChangeRequest[]; listed?: JobChange[] }> {
    if (!mayNameChanges(body)) return { changes: [...earlier] };
    const own: NamedRepository = {
      name: DOCS_REPOSITORY,
      repository: project.repository,
      host: project.host,
    };
    const contexts = await trx
      .selectFrom('context_repositories')
      .select(['name', 'repository', 'host'])
      .where('project_id', '=', project.id)
      .orderBy('name')
      .execute();
    const repositories = [own, ...contexts];
    const changes = requestedChanges(body.prompt, body.changes, repositories, earlier);
    if (changes.length === earlier.length) return { changes };
    return { changes, listed: pendingJobChanges(changes, repositories, known) };
  }

  async function lockedProject(trx: Transaction<Database>, projectId: string): Promise<ProjectRow> {
    const project = await lockProject(dialect, trx, projectId);
    if (!project) throw projectNotFound(projectId);
    return project;
  }

  // Compiled once: polling a job is the API's most frequent request.
  const jobById = db
    .selectFrom('jobs')
    .selectAll()
    .where('id', '=', '')
    .where('project_id', '=', '')
    .compile();

  const insertJob = compileInsert(db, 'jobs', JOB_TEMPLATE);
  const queueRun = runQueue(db);

  async function checkEventsQuery(
    projectId: string,
    jobId: string,
    rawQuery: unknown,
  ): Promise<ListEventsQuery> {
    const query: ListEventsQuery = parseOrThrow(listEventsQuery, rawQuery, 'query');
    await findJob(projectId, jobId);
    return query;
  }

  // A poll's key and job in one statement, compiled once: current by construction, so the key
  // cache (and SQLite's data_version read that keeps it honest) is not needed.
  const jobWithKey = db
    .selectFrom('api_keys as k')
    .leftJoin('jobs as j', (join) => join.on('j.id', '=', '').on('j.project_id', '=', ''))
    .selectAll('j')
    .select([
      'k.id as key_id',
      'k.project_id as key_project_id',
      'k.name as key_name',
      'k.hash as key_hash',
      'k.last_four as key_last_four',
      'k.created_at as key_created_at',
      'k.expires_at as key_expires_at',
      'k.revoked_at as key_revoked_at',
      'k.last_used_at as key_last_used_at',
    ])
    .where('k.hash', '=', '')
    .compile();
  type JobWithKeyRow = Partial<JobRow> & { [C in keyof ApiKeyRow as `key_${C}`]: ApiKeyRow[C] };

  const jobNotFound = (jobId: string) =>
    new DocwrightError('job-not-found', `job ${jobId} does not exist in this project`);

  async function findJob(projectId: string, jobId: string, trx = db): Promise<JobRow> {
    const row = isJobId(jobId)
      ? (await trx.executeQuery<JobRow>({ ...jobById, parameters: [jobId, projectId] })).rows[0]
      : undefined;
    if (!row) throw jobNotFound(jobId);
    return row;
  }

  /** A job that can take another run: 409 while it runs or once it is archived. */
  async function findFinishedJob(projectId: string, jobId: string, trx: Transaction<Database>) {
    const job = await findJob(projectId, jobId, trx);
    if (job.status === 'active') {
      throw new DocwrightError('job-busy', 'the job is still running; send the message after it ends');
    }
    if (job.status === 'archived')
      throw new DocwrightError('job-archived', 'the job is archived and takes no more messages');
    return job;
  }

  async function lastRun(trx: Transaction<Database>, jobId: string) {
    const last = await trx
      .selectFrom('job_runs')
      .select(['seq', 'prompt', 'changes'])
      .where('job_id', '=', jobId)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    return { seq: Number(last.seq), prompt: last.prompt, changes: parseChangeRequests(last.changes) };
  }

  /** Queues the next run of a finished job and makes the job active again (a follow-up or a retry). */
  async function continueJob(
    trx: Transaction<Database>,
    project: ProjectRow,
    job: JobRow,
    at: Date,
    next: {
      seq: number;
      prompt: string;
      changes: readonly ChangeRequest[];
      /** The job's `changes` once the follow-up added some (pendingJobChanges). */
      listed?: JobChange[];
      event: { type: string; data: unknown };
      /** A new base for the job (a retry of a job that never pushed takes the project's current one). */
      base?: { repository: string; ref: string };
    },
  ) {
    const runId = await queueRun(trx, {
      jobId: job.id,
      projectId: project.id,
      seq: next.seq,
      prompt: next.prompt,
      changes: next.changes,
      at,
    });
    const changes = {
      status: 'active' as const,
      error_code: null,
      error_message: null,
      updated_at: at.toISOString(),
      // A job created before any model was configured takes the one configured now.
      ...(job.model === '' && { model: chooseModel(project, undefined) }),
      ...(next.listed && { changes: JSON.stringify(next.listed) }),
      ...next.base,
    };
    await trx.updateTable('jobs').set(changes).where('id', '=', job.id).execute();
    await appendEvents(trx, [{ jobId: job.id, runId, ...next.event }], at);
    return { job: toAgentJob({ ...job, ...changes }), statusCode: 200, location: null };
  }

  /**
   * The shared shape of create and follow-up: one transaction that locks the
   * project, answers a replayed `Idempotency-Key` from storage, consumes a
   * rate-limit use, does the work and remembers the response.
   */
  async function createWork(
    projectId: string,
    idempotency: IdempotentRequest | undefined,
    work: (
      trx: Transaction<Database>,
      project: ProjectRow,
      at: Date,
    ) => Promise<{ job: AgentJob; statusCode: number; location: string | null }>,
  ): Promise<WorkResult> {
    const result = await db.transaction().execute(async (trx): Promise<WorkResult> => {
      const at = now();
      const project = await lockedProject(trx, projectId);
      if (idempotency) {
        const replay = await findReplay(trx, projectId, idempotency, at);
        if (replay) {
          const rateLimit = await peekRateLimit(trx, projectId, limitOf(project), at);
          return { ...replay, rateLimit, replayed: true };
        }
      }
      await checkTokenBudget(trx, project, at);
      const rateLimit = await consumeRateLimit(trx, projectId, limitOf(project), at);
      const { job, statusCode, location } = await work(trx, project, at);
      if (idempotency)
        await rememberResponse(trx, projectId, idempotency, { statusCode, body: job, location }, at);
      return { statusCode, body: job, location, rateLimit, replayed: false };
    });
    if (!result.replayed) await publish({ kind: 'run-queued' });
    return result;
  }

  /** Refuses new work once the project's monthly token budget is spent (429 until the month ends). */
  async function checkTokenBudget(trx: Transaction<Database>, project: ProjectRow, at: Date): Promise<void> {
    const budget = (JSON.parse(project.settings) as { monthlyTokenBudget?: number | null })
      .monthlyTokenBudget;
    if (!budget) return;
    const spent = await monthlyTokens(trx, project.id, at);
    if (spent < budget) return;
    const renewed = nextMonth(at);
    throw new DocwrightError(
      'token-budget-exceeded',
      `the project has used ${spent} of its ${budget} model tokens for ${usageMonth(at)}; new jobs and follow-ups are refused until ${renewed.toISOString().slice(0, 10)} (UTC), unless the budget is raised (docwright project update --monthly-token-budget)`,
      { retryAfter: Math.ceil((renewed.getTime() - at.getTime()) / 1000) },
    );
  }

  function chooseModel(
    project: Pick<ProjectRow, 'model' | 'settings'>,
    requested: string | undefined,
  ): string {
    const settings = JSON.parse(project.settings) as { allowedModels?: string[] };
    const fallback = project.model ?? options.defaultModel ?? '';
    if (requested === undefined) return fallback;
    const allowed = new Set([fallback, ...(settings.allowedModels ?? [])].filter(Boolean));
    if (!allowed.has(requested)) {
      const message =
        allowed.size > 0
          ? `is not one of this project's models: ${[...allowed].join(', ')}`
          : 'this project allows no model choice';
      throw new DocwrightError('invalid-request', `model ${message}`, {
        fields: [{ field: 'model', message }],
      });
    }
    return requested;
  }

  const createOnPostgres =
    dialect === 'postgres' && store.prepared
      ? postgresCreate({
          store,
          defaultRateLimit: options.defaultRateLimit,
          publish,
          now,
          chooseModel,
        })
      : undefined;

  return {
    /** Creates a job and queues its first run (docs/api/overview.mdx). */
    async create(
      projectId: string,
      rawBody: unknown,
      idempotency?: IdempotentRequest,
      /** `headBranch`: the branch the agent pushes to, instead of prefix + short id (v1 `branch`, validated by the caller). */
      options: { headBranch?: string } = {},
    ): Promise<WorkResult> {
      const body = parseOrThrow(createSchema, rawBody);
      // An ask goes the ordinary way: the one-statement create writes edit jobs only.
      if (createOnPostgres && !idempotency && !mayNameChanges(body) && body.mode !== 'ask') {
        const created = await createOnPostgres(projectId, {
          prompt: body.prompt,
          ref: body.ref,
          model: body.model,
          draft: body.draft,
          headBranch: options.headBranch,
        });
        if (created) return created;
      }
      return createWork(projectId, idempotency, async (trx, project, at) => {
        const row = newJobRow({
          projectId,
          repository: project.repository,
          ref: body.ref ?? project.ref,
          model: chooseModel(project, body.model),
          draft: body.draft,
          headBranch: options.headBranch,
          at,
          mode: body.mode,
        });
        const { changes, listed } = await changesOf(trx, project, body);
        // A caller sees from the start what the job will document (resolved by the first run).
        if (listed) row.changes = JSON.stringify(listed);
        await trx.executeQuery(insertJob(row));
        await enqueueJobMessage(trx, { type: 'job.created', projectId, jobId: row.id, job: row, at });
        const runId = await queueRun(trx, {
          jobId: row.id,
          projectId,
          seq: 1,
          prompt: body.prompt,
          changes,
          at,
        });
        await appendEvents(
          trx,
          [
            {
              jobId: row.id,
              runId,
              type: 'job.created',
              data: {
                prompt: body.prompt,
                model: row.model,
                ref: row.ref,
                ...(changes.length > 0 && { changes }),
                ...(row.mode === 'ask' && { mode: row.mode }),
              },
            },
          ],
          at,
        );
        return { job: toAgentJob(row), statusCode: 201, location: `/v2/agent/${projectId}/job/${row.id}` };
      });
    },

    /** Queues a follow-up run on a finished job (docs/api/overview.mdx states). */
    async message(
      projectId: string,
      jobId: string,
      rawBody: unknown,
      idempotency?: IdempotentRequest,
      /**
       * `within`: runs in the transaction that queues the run, once the job is known to take it,
       * with the new run's `seq`; what it throws undoes the follow-up (a pull request comment
       * claims itself here, so that it starts one follow-up at most: docs/pull-request-comments.mdx).
       */
      options: { within?: (trx: Transaction<Database>, seq: number) => Promise<void> } = {},
    ): Promise<WorkResult> {
      const body = parseOrThrow(messageSchema, rawBody);
      return createWork(projectId, idempotency, async (trx, project, at) => {
        const job = await findFinishedJob(projectId, jobId, trx);
        const last = await lastRun(trx, jobId);
        await options.within?.(trx, last.seq + 1);
        const { changes, listed } = await changesOf(
          trx,
          project,
          body,
          last.changes,
          parseJobChanges(job.changes),
        );
        return continueJob(trx, project, job, at, {
          seq: last.seq + 1,
          prompt: body.prompt,
          changes,
          ...(listed && { listed }),
          event: {
            type: 'job.message',
            data: { prompt: body.prompt, ...(changes.length > last.changes.length && { changes }) },
          },
        });
      });
    },

    /**
     * **(extension)** Runs a failed job's last instruction again, as a new run of the same job (on
     * its branch, told how the failed run ended). Counts against the rate limit like a follow-up.
     */
    async retry(
      projectId: string,
      jobId: string,
      rawBody: unknown,
      idempotency?: IdempotentRequest,
    ): Promise<WorkResult> {
      parseOrThrow(retryBody, rawBody ?? {});
      return createWork(projectId, idempotency, async (trx, project, at) => {
        const job = await findFinishedJob(projectId, jobId, trx);
        if (job.status !== 'failed') {
          throw new DocwrightError(
            'job-not-failed',
            'only a failed job can be retried; this one completed: send a follow-up message to change it',
          );
        }
        const last = await lastRun(trx, jobId);
        const base = retryBase(project, job);
        return continueJob(trx, project, job, at, {
          seq: last.seq + 1,
          prompt: last.prompt,
          changes: last.changes,
          event: {
            type: 'job.retried',
            data: {
              prompt: last.prompt,
              retryOf: last.seq,
              ...(base && { ref: base.ref, previousRef: job.ref }),
            },
          },
          ...(base && { base }),
        });
      });
    },

    async get(projectId: string, jobId: string): Promise<AgentJob> {
      return toAgentJob(await findJob(projectId, jobId));
    },

    /**
     * The key with hash `keyHash` and, if it exists in `projectId`, the job: one statement for
     * the API's most frequent request. `job()` throws `job-not-found` when there is none; the
     * caller checks the key first.
     */
    async findWithKey(projectId: string, jobId: string, keyHash: string) {
      // An id of the wrong shape matches nothing (and PostgreSQL would refuse a NUL byte in it).
      const parameters = [isJobId(jobId) ? jobId : '', isProjectId(projectId) ? projectId : '', keyHash];
      const row = (await store.read<JobWithKeyRow>({ ...jobWithKey, parameters }))[0];
      const key: ApiKeyRow | undefined = row && {
        id: row.key_id,
        project_id: row.key_project_id,
        name: row.key_name,
        hash: row.key_hash,
        last_four: row.key_last_four,
        created_at: row.key_created_at,
        expires_at: row.key_expires_at,
        revoked_at: row.key_revoked_at,
        last_used_at: row.key_last_used_at,
      };
      return {
        key,
        job(): AgentJob {
          if (!row?.id) throw jobNotFound(jobId);
          return toAgentJob(row as JobRow);
        },
      };
    },

    /** Newest first, `limit` at a time; `nextCursor` continues after the last one. */
    async list(projectId: string, rawQuery: unknown): Promise<JobPage> {
      const query: ListJobsQuery = parseOrThrow(listJobsQuery, rawQuery, 'query');
      let select = db.selectFrom('jobs').selectAll().where('project_id', '=', projectId);
      if (query.status) select = select.where('status', '=', query.status);
      if (query.cursor) select = select.where('id', '<', decodeCursor(query.cursor));
      const rows = await select
        .orderBy('id', 'desc')
        .limit(query.limit + 1)
        .execute();
      const page = rows.slice(0, query.limit);
      const more = rows.length > query.limit;
      return { jobs: page.map(toAgentJob), nextCursor: more ? encodeCursor(page.at(-1)!.id) : null };
    },

    /** Idempotent. Archiving an active job cancels its queued or running run. */
    async archive(projectId: string, jobId: string): Promise<AgentJob> {
      let cancelled: string[] = [];
      const archived = await db.transaction().execute(async (trx) => {
        const job = await findJob(projectId, jobId, trx);
        if (job.status === 'archived') return toAgentJob(job);
        const at = now();
        const timestamp = at.toISOString();
        const changes = { status: 'archived' as const, archived_at: timestamp, updated_at: timestamp };
        // The run before the job, as every transaction that writes both does (usage.ts,
        // queue/finish.ts): the other order deadlocked on PostgreSQL with a run recording its usage.
        if (job.status === 'active') cancelled = await cancelRuns(trx, jobId, at);
        await trx.updateTable('jobs').set(changes).where('id', '=', jobId).execute();
        await appendEvents(trx, [{ jobId, type: 'job.archived', data: { previousStatus: job.status } }], at);
        const archivedRow = { ...job, ...changes };
        await enqueueJobMessage(trx, { type: 'job.archived', projectId, jobId, job: archivedRow, at });
        return toAgentJob(archivedRow);
      });
      for (const runId of cancelled) await publish({ kind: 'run-cancelled', runId });
      await publish({ kind: 'job-event', jobId });
      return archived;
    },

    async events(projectId: string, jobId: string, rawQuery: unknown): Promise<JobEvent[]> {
      return listEvents(db, jobId, await checkEventsQuery(projectId, jobId, rawQuery));
    },

    /** An events query checked, and the job found, without reading any event (how a stream starts). */
    eventsQuery: checkEventsQuery,

    /** The diff of the job's branch against its base, as the last committing run stored it. */
    async diff(projectId: string, jobId: string): Promise<RunDiffRow> {
      await findJob(projectId, jobId);
      const diff = await latestDiff(db, jobId);
      if (!diff)
        throw new DocwrightError('diff-not-found', `job ${jobId} has no commit yet, so it has no diff`);
      return diff;
    },

    /** The rate-limit state of a project without using anything; undefined for an unknown project. */
    async rateLimit(projectId: string): Promise<RateLimitState | undefined> {
      const project = await db
        .selectFrom('projects')
        .selectAll()
        .where('id', '=', projectId)
        .executeTakeFirst();
      return project ? peekRateLimit(db, projectId, limitOf(project), now()) : undefined;
    },

    /** Whether docwright created `branch` for a job of the project (docs/api/mintlify-v1.mdx: a v1 job may continue it). */
    ownsBranch: (projectId: string, branch: string): Promise<boolean> =>
      isOwnHeadBranch(db, projectId, branch),

    /** Whether a project exists (auth uses it to tell 403 from 404). */
    async projectExists(projectId: string): Promise<boolean> {
      return (
        (await db.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst()) !==
        undefined
      );
    },
  };
}

const projectNotFound = (projectId: string) =>
  new DocwrightError('project-not-found', `project ${projectId} does not exist`);
