import type { Principal } from '../keys/keys.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set by the routes' onRequest hook. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The route uses the rate limit: its responses, errors included, carry the RateLimit headers. */
    rateLimitHeaders?: boolean;
  }
}
