import type { FastifyInstance } from 'fastify';
import type { App } from '../../app.ts';
import { DocwrightError } from '../../errors.ts';
import { buildOpenApiDocument } from '../openapi.ts';

/** Health, readiness and the API description: no authentication. */
export function registerMetaRoutes(server: FastifyInstance, app: App, version: string): void {
  const openapi = JSON.stringify(
    buildOpenApiDocument({ promptMaxChars: app.config.promptMaxChars, version }),
  );

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

  /** Readiness: the database answers too. */
  server.get('/readyz', async () => {
    try {
      await app.store.ping();
    } catch (cause) {
      throw new DocwrightError('service-unavailable', 'the database is unavailable', {
        retryAfter: 5,
        cause,
      });
    }
    return { status: 'ready' };
  });
}
