import type { AgentJob } from './agent-job.ts';
import type { RateLimitState } from './rate-limit.ts';

/**
 * What a request that does work (create, follow-up, retry) comes to, in the domain's terms: the
 * job, whether the request created it, and the project's rate-limit state. How that is answered
 * (status, `Location`, headers) is each surface's business (src/api/routes/jobs.ts for HTTP).
 */
export interface JobWork {
  /** The job as the request left it; for a replay, as the original request left it. */
  job: AgentJob;
  /** True when the request created the job (a create), false when it queued another run of it. */
  created: boolean;
  rateLimit: RateLimitState;
  /** True when an `Idempotency-Key` matched an earlier request and nothing was done. */
  replayed: boolean;
}

/** What an `Idempotency-Key` remembers of the work its first request did: replayed as it was. */
export type RememberedWork = Pick<JobWork, 'job' | 'created'>;
