import type { Kysely, Transaction } from 'kysely';
import { DocwrightError } from '../errors.ts';
import { isJobId } from '../ids.ts';
import type { Store } from '../store/database.ts';
import { lockProject } from '../store/dialect.ts';
import type { Database, JobRow, ProjectRow } from '../store/schema.ts';
import type { Signal } from '../store/signals.ts';

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

/** What the parts of the job service share (src/jobs/job-service.ts puts them together). */
export interface JobContext {
  options: JobServiceOptions;
  store: Store;
  db: Kysely<Database>;
  now: () => Date;
  /** Tells other processes; never throws (signals are nudges: a lost one only delays a wake-up). */
  publish: (signal: Signal) => Promise<void>;
  /** The project's uses per hour. */
  limitOf: (project: ProjectRow) => number;
  /** The job, or `job-not-found` (also for an id of the wrong shape). */
  findJob: (projectId: string, jobId: string, trx?: Kysely<Database>) => Promise<JobRow>;
  /** The project, locked until the transaction ends, or `project-not-found`. */
  lockedProject: (trx: Transaction<Database>, projectId: string) => Promise<ProjectRow>;
}

export const jobNotFound = (jobId: string) =>
  new DocwrightError('job-not-found', `job ${jobId} does not exist in this project`);

const projectNotFound = (projectId: string) =>
  new DocwrightError('project-not-found', `project ${projectId} does not exist`);

export function createJobContext(options: JobServiceOptions): JobContext {
  const { store } = options;
  const { db, dialect } = store;
  // Compiled once: polling a job is the API's most frequent request.
  const jobById = db
    .selectFrom('jobs')
    .selectAll()
    .where('id', '=', '')
    .where('project_id', '=', '')
    .compile();
  return {
    options,
    store,
    db,
    now: options.now ?? (() => new Date()),
    publish: (signal) => (options.publish?.(signal) ?? Promise.resolve()).catch(() => {}),
    limitOf: (project) => project.rate_limit ?? options.defaultRateLimit,
    async findJob(projectId, jobId, trx = db) {
      const row = isJobId(jobId)
        ? (await trx.executeQuery<JobRow>({ ...jobById, parameters: [jobId, projectId] })).rows[0]
        : undefined;
      if (!row) throw jobNotFound(jobId);
      return row;
    },
    async lockedProject(trx, projectId) {
      const project = await lockProject(dialect, trx, projectId);
      if (!project) throw projectNotFound(projectId);
      return project;
    },
  };
}
