import type { Principal } from '../keys/keys.ts';
import type { OpenStreams } from './server-sent-events.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The event streams this server holds open (server-sent-events.ts). */
    eventStreams: OpenStreams;
  }
  interface FastifyRequest {
    /** The authenticated caller; set by the routes' onRequest hook. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The route uses the rate limit: its responses, errors included, carry the RateLimit headers. */
    rateLimitHeaders?: boolean;
  }
}
