import type { FastifyReply } from 'fastify';
import { RATE_LIMIT_WINDOW_SECONDS, type RateLimitState } from '../jobs/rate-limit.ts';

/** `RateLimit-Policy` and `RateLimit` (IETF httpapi-ratelimit-headers), as docs/api/rate-limits.mdx fixes them. */
export function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  reply.header('ratelimit-policy', `"create";q=${state.limit};w=${RATE_LIMIT_WINDOW_SECONDS}`);
  reply.header('ratelimit', `"create";r=${state.remaining};t=${state.resetSeconds}`);
}
