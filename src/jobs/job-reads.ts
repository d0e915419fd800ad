import { DocwrightError } from '../errors.ts';
import { isJobId, isProjectId } from '../ids.ts';
import type { ApiKeyRow, JobRow, RunDiffRow } from '../store/schema.ts';
import { parseOrThrow } from '../validation.ts';
import { type AgentJob, toAgentJob } from './agent-job.ts';
import { isOwnHeadBranch } from './branches.ts';
import { latestDiff } from './diffs.ts';
import { type JobEvent, listEvents } from './events.ts';
import { type JobContext, jobNotFound } from './job-context.ts';
import { peekRateLimit, type RateLimitState } from './rate-limit.ts';
import { type ListEventsQuery, type ListJobsQuery, listEventsQuery, listJobsQuery } from './requests.ts';

/** A page of jobs, newest first; `nextCursor` continues after the last one. */
export interface JobPage {
  jobs: AgentJob[];
  nextCursor: string | null;
}

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

type JobWithKeyRow = Partial<JobRow> & { [C in keyof ApiKeyRow as `key_${C}`]: ApiKeyRow[C] };

/** The key of a row of `jobWithKey`, if the row exists. */
function keyOf(row: JobWithKeyRow | undefined): ApiKeyRow | undefined {
  return (
    row && {
      id: row.key_id,
      project_id: row.key_project_id,
      name: row.key_name,
      hash: row.key_hash,
      last_four: row.key_last_four,
      created_at: row.key_created_at,
      expires_at: row.key_expires_at,
      revoked_at: row.key_revoked_at,
      last_used_at: row.key_last_used_at,
    }
  );
}

/** Reading jobs: one, a page, their events and diffs; and what authentication asks of projects. */
export function jobReads(context: JobContext) {
  const { store, db, findJob } = context;

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

  /** An events query checked, and the job found, without reading any event (how a stream starts). */
  async function eventsQuery(projectId: string, jobId: string, rawQuery: unknown): Promise<ListEventsQuery> {
    const query: ListEventsQuery = parseOrThrow(listEventsQuery, rawQuery, 'query');
    await findJob(projectId, jobId);
    return query;
  }

  return {
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
      return {
        key: keyOf(row),
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

    async events(projectId: string, jobId: string, rawQuery: unknown): Promise<JobEvent[]> {
      return listEvents(db, jobId, await eventsQuery(projectId, jobId, rawQuery));
    },

    eventsQuery,

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
      return project ? peekRateLimit(db, projectId, context.limitOf(project), context.now()) : undefined;
    },

    /** Whether docwright created `branch` for a job of the project (docs/api/mintlify-v1.mdx: a v1 job may continue it). */
    ownsBranch: (projectId: string, branch: string): Promise<boolean> =>
      isOwnHeadBranch(db, projectId, branch),

    /** Whether a project exists (auth uses it to tell 403 from 404). */
    async projectExists(projectId: string): Promise<boolean> {
      const found = await db
        .selectFrom('projects')
        .select('id')
        .where('id', '=', projectId)
        .executeTakeFirst();
      return found !== undefined;
    },
  };
}
