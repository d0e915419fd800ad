import { DocwrightError } from '../errors.ts';
import { isJobId } from '../ids.ts';
import type { RunDiffRow } from '../store/schema.ts';
import { parseOrThrow } from '../validation.ts';
import { type AgentJob, toAgentJob } from './agent-job.ts';
import { isOwnHeadBranch } from './branches.ts';
import { latestDiff } from './diffs.ts';
import { type JobEvent, listEvents } from './events.ts';
import type { JobContext } from './job-context.ts';
import { jobWithKey } from './job-with-key.ts';
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

/** Reading jobs: one, a page, their events and diffs; and what authentication asks of projects. */
export function jobReads(context: JobContext) {
  const { db, findJob } = context;

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

    findWithKey: jobWithKey(context),

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
