/**
 * What the surfaces show of jobs beyond the AgentJob (job-service.ts): each job's runs and their
 * instructions, its transcript, live or stored, its diff, the v1 API's job rows and the
 * overview's counts per project. Reads only:
 * the dashboard, the Mintlify v1 API and the v2 event stream call these, never the database.
 */
import type { Kysely } from 'kysely';
import { isJobId } from '../ids.ts';
import type { Database, JobRow, JobRunRow, RunDiffRow } from '../store/schema.ts';
import type { Signals } from '../store/signals.ts';
import type { JobStatus } from './agent-job.ts';
import { latestDiff } from './diffs.ts';
import { type FollowOptions, followJobEventRows, followJobEvents } from './event-feed.ts';
import { type JobEvent, listEvents } from './events.ts';
import { type ProjectStats, projectStats } from './project-stats.ts';

export type JobHistory = ReturnType<typeof createJobHistory>;
/** The stored shapes the surfaces render (they import them from here, never from the store). */
export type { JobRow, JobRunRow, RunDiffRow };

export function createJobHistory(deps: { db: Kysely<Database>; signals: Signals; now: () => Date }) {
  const { db } = deps;
  return {
    /** The job's runs, first first: each one's instruction, model and outcome. */
    runs(jobId: string): Promise<JobRunRow[]> {
      return db.selectFrom('job_runs').selectAll().where('job_id', '=', jobId).orderBy('seq').execute();
    },

    /** The first instruction of each job (the jobs table holds none), by job id. */
    async firstPrompts(jobIds: readonly string[]): Promise<Map<string, string>> {
      if (jobIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('job_runs')
        .select(['job_id', 'prompt'])
        .where('job_id', 'in', jobIds)
        .where('seq', '=', 1)
        .execute();
      return new Map(rows.map((r) => [r.job_id, r.prompt]));
    },

    /** The first `limit` events of the job's transcript. */
    transcript(jobId: string, options: { limit: number }): Promise<JobEvent[]> {
      return listEvents(db, jobId, options);
    },

    /** The diff the job's last committing run stored. */
    latestDiff(jobId: string): Promise<RunDiffRow | undefined> {
      return latestDiff(db, jobId);
    },

    /** The status of each of `jobIds` that is the project's (the others are left out). */
    statuses(projectId: string, jobIds: readonly string[]): Promise<{ id: string; status: JobStatus }[]> {
      return db
        .selectFrom('jobs')
        .select(['id', 'status'])
        .where('project_id', '=', projectId)
        .where('id', 'in', jobIds)
        .execute();
    },

    /** A job's status, or null when there is no such job (any longer). */
    async status(jobId: string): Promise<JobStatus | null> {
      const row = await db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirst();
      return row?.status ?? null;
    },

    /** The project's job `jobId` as stored (the v1 API shapes its own view of it). */
    async row(projectId: string, jobId: string): Promise<JobRow | undefined> {
      if (!isJobId(jobId)) return undefined;
      return db
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', jobId)
        .where('project_id', '=', projectId)
        .executeTakeFirst();
    },

    /** The project's jobs as stored, newest first. */
    rows(projectId: string, page: { skip: number; take: number }): Promise<JobRow[]> {
      return db
        .selectFrom('jobs')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id', 'desc')
        .offset(page.skip)
        .limit(page.take)
        .execute();
    },

    /** What the overview shows of each project: jobs active, ended lately, tokens used. */
    projectStats(projectIds: readonly string[]): Promise<Map<string, ProjectStats>> {
      return projectStats(deps, projectIds);
    },

    /** The job's transcript as it is written, until the job ends (event-feed.ts). */
    follow(jobId: string, options?: FollowOptions) {
      return followJobEvents(deps, jobId, options);
    },

    /** `follow` as stored rows, for streams that send them as they are. */
    followRows(jobId: string, options?: FollowOptions) {
      return followJobEventRows(deps, jobId, options);
    },
  };
}
