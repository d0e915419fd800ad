import type { RateLimitState } from './rate-limit.ts';

/** What a request that does work (create, message, retry) answers: status, body and headers' facts. */
export interface WorkResult {
  statusCode: number;
  /** The job record, or for a replay the original response body. */
  body: unknown;
  location: string | null;
  rateLimit: RateLimitState;
  /** True when an `Idempotency-Key` matched and nothing was created. */
  replayed: boolean;
}
