import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { PROBLEM_CONTENT_TYPE, problemBody, sendProblem, toDocwrightError } from './problem.ts';
import { setRateLimitHeaders } from './rate-limit-headers.ts';
import { registerJobRoutes } from './routes/jobs.ts';
import { registerMetaRoutes } from './routes/meta.ts';

/** SPEC §2: larger bodies get 413. */
export const BODY_LIMIT_BYTES = 256 * 1024;

/**
 * The HTTP server: Fastify with every error — ours, Fastify's, the router's
 * and the HTTP parser's — rendered as problem+json in one place.
 */
export function buildServer(app: App): FastifyInstance {
  const server = Fastify({
    loggerInstance: app.logger as FastifyBaseLogger,
    disableRequestLogging: true,
    bodyLimit: BODY_LIMIT_BYTES,
    maxParamLength: 500,
    return503OnClosing: true,
    requestIdHeader: 'x-request-id',
    requestIdLogLabel: 'requestId',
    // Router-level failures (malformed percent-encoding in the path…).
    frameworkErrors: (error, _request, reply) => {
      sendProblem(reply, toDocwrightError(error));
    },
    // Failures before a request exists (bad request line, oversized headers):
    // answer in problem+json too, straight onto the socket.
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => {
      if (!socket.writable) return socket.destroy();
      const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
      const problem = problemBody(
        new DocwrightError(
          status === 431 ? 'headers-too-large' : 'invalid-request',
          status === 431 ? 'request headers are too large' : 'malformed HTTP request',
        ),
      );
      const body = JSON.stringify(problem);
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  });

  // Only JSON bodies are accepted (415 for the rest).
  server.removeContentTypeParser(['text/plain']);

  server.decorateRequest('principal', null);

  server.setErrorHandler(async (error, request, reply) => {
    const problem = toDocwrightError(error);
    if (problem.status >= 500) {
      const level = problem.code === 'service-unavailable' ? 'warn' : 'error';
      request.log[level]({ err: problem.cause ?? error, code: problem.code }, 'request failed');
    } else if (request.routeOptions.config.rateLimitHeaders && request.principal) {
      const state =
        problem.rateLimit ?? (await app.jobs.rateLimit(request.principal.projectId).catch(() => undefined));
      if (state) setRateLimitHeaders(reply, state);
    }
    return sendProblem(reply, problem);
  });

  server.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      new DocwrightError('not-found', `no route ${request.method} ${request.url.split('?')[0]}`),
    ),
  );

  server.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
  });

  registerMetaRoutes(server, app, VERSION);
  registerJobRoutes(server, app);
  return server;
}
