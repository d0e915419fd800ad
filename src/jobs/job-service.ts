/**
 * The job service: what every surface (API, v1, dashboard, automations, CLI) asks of jobs. It
 * speaks the domain: work answers a `JobWork` (the job, whether it was created, the rate limit,
 * whether it was a replay) and refusals are `DocwrightError`s; status codes, `Location` and
 * headers are the surfaces' (src/api/routes/jobs.ts). Its parts live beside it: creating
 * (create-job.ts), follow-ups and retries (follow-up.ts), the transaction they share
 * (work-transaction.ts), reads (job-reads.ts, job-with-key.ts) and archiving (archive-job.ts).
 */
import { jobArchiving } from './archive-job.ts';
import { jobCreation } from './create-job.ts';
import { jobFollowUps } from './follow-up.ts';
import { createJobContext, type JobServiceOptions } from './job-context.ts';
import { jobReads } from './job-reads.ts';

export type { CreateJobOptions } from './create-job.ts';
export type { JobServiceOptions } from './job-context.ts';
export type { JobPage } from './job-reads.ts';
export type { JobWork } from './work-result.ts';

export type JobService = ReturnType<typeof createJobService>;

export function createJobService(options: JobServiceOptions) {
  const context = createJobContext(options);
  const followUps = jobFollowUps(context);
  return {
    /**
     * Creates a job and queues its first run (docs/api/overview.mdx):
     * `create(projectId, body, idempotency?, { headBranch? })` → `{ job, created: true, rateLimit, replayed }`.
     */
    create: jobCreation(context),
    /** Queues a follow-up run on a finished job: `{ job, created: false, rateLimit, replayed }`. */
    message: followUps.message,
    /** **(extension)** Runs a failed job's last instruction again, as a new run of the same job. */
    retry: followUps.retry,
    /** Idempotent. Archiving an active job cancels its queued or running run. */
    archive: jobArchiving(context),
    ...jobReads(context),
  };
}
