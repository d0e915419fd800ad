import type { FastifyInstance } from 'fastify';
import type { App } from '../../app.ts';
import { DocwrightError } from '../../errors.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'database' | 'logger' | 'metrics'>;

/**
 * Health, readiness and the API description: no authentication. `openapi` is the description of
 * every surface the server has (openapi.ts, built by the server, which knows them all).
 */
export function registerMetaRoutes(server: FastifyInstance, app: AppUses, openapiDocument: object): void {
  const openapi = JSON.stringify(openapiDocument);

  server.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(openapi),
  );

  /** Prometheus metrics of this process (jobs and queue depth cover the whole database). */
  server.get('/metrics', async (_request, reply) => {
    const body = await app.metrics.registry.metrics();
    return reply.type(app.metrics.registry.contentType).send(body);
  });

  /** Liveness: the process answers. */
  server.get('/healthz', async () => ({ status: 'ok' }));

  /**
   * Readiness: the database answers and accepts writes. A change either way is logged once, with
   * what is wrong and which database; the response says only that the database is unavailable.
   */
  let unready: string | undefined;
  server.get('/readyz', async () => {
    try {
      await app.database.ping();
      await app.database.checkWritable();
    } catch (cause) {
      const reason =
        cause instanceof DocwrightError
          ? cause.message
          : `the database ${app.database.location} does not answer`;
      if (reason !== unready)
        app.logger.error({ err: cause, database: app.database.location }, `not ready: ${reason}`);
      unready = reason;
      throw new DocwrightError('service-unavailable', 'the database is unavailable', {
        retryAfter: 5,
        cause,
      });
    }
    if (unready !== undefined) app.logger.info({ database: app.database.location }, 'ready again');
    unready = undefined;
    return { status: 'ready' };
  });
}
