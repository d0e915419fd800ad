import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { registerAutomationRoutes } from './api/routes/automations.ts';
import { registerJobRoutes } from './api/routes/jobs.ts';
import { registerMetaRoutes } from './api/routes/meta.ts';
import type { App } from './app.ts';
import { registerV1Routes } from './compat/v1.ts';
import { registerDashboard } from './dashboard/index.ts';
import { DocwrightError, errorStatus } from './errors.ts';
import { PROBLEM_CONTENT_TYPE, problemBody, sendProblem, toDocwrightError } from './http/problem.ts';
import { setRateLimitHeaders } from './http/rate-limit-headers.ts';
import { RequestLogger } from './http/request-logger.ts';
import { COMMON_HEADERS } from './http/response-headers.ts';
import { OpenStreams } from './http/server-sent-events.ts';
import { registerHookRoutes } from './inbound-hooks/hook-route.ts';
import type { Logger } from './logger.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { registerSlackRoutes } from './slack/slack-routes.ts';
import { VERSION } from './version.ts';

/** docs/api/overview.mdx: larger bodies get 413. */
export const BODY_LIMIT_BYTES = 256 * 1024;

/**
 * Request bodies of the API are flat objects; deeper JSON is refused before
 * code that recurses over a body (the Idempotency-Key fingerprint) can
 * overflow the stack on it.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Why a well-formed JSON body is refused anyway, or undefined. Iterative, so
 * that the check cannot overflow the stack itself.
 */
function refusedJson(body: unknown): string | undefined {
  const pending: [unknown, number][] = [[body, 1]];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const [value, depth] = item;
    // PostgreSQL text cannot hold U+0000; refusing it here keeps both databases alike.
    if (typeof value === 'string' && value.includes('\0')) return 'contains a NUL character (\\u0000)';
    // A raw body (the code hosts' webhooks) is bytes, not JSON.
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) continue;
    if (depth > MAX_JSON_DEPTH) return `is nested more than ${MAX_JSON_DEPTH} levels deep`;
    for (const [key, child] of Object.entries(value)) pending.push([key, depth], [child, depth + 1]);
  }
  return undefined;
}

/** Query parameters whose values are logged; every other value is replaced (a key sent as `?api_key=…`). */
const LOGGED_QUERY_PARAMETERS = new Set(['status', 'limit', 'cursor', 'after', 'skip', 'take', 'next']);

/** The request URL as it is logged: the path, and the query with values of unknown parameters redacted. */
export function loggableUrl(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const parameters = url
    .slice(question + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      if (LOGGED_QUERY_PARAMETERS.has(name)) return pair;
      return equals === -1 ? '[redacted]' : `${name}=[redacted]`;
    });
  return `${url.slice(0, question)}?${parameters.join('&')}`;
}

/** A problem+json answer written by hand, for the few failures that never become a Fastify request. */
function rawProblem(error: DocwrightError) {
  const body = JSON.stringify(problemBody(error));
  const headers = {
    ...COMMON_HEADERS,
    'Content-Type': PROBLEM_CONTENT_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  return { body, headers };
}

/** Answers on a socket the HTTP server has let go of, and closes it. */
function endWithProblem(socket: Duplex, error: DocwrightError): void {
  const { body, headers } = rawProblem(error);
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${head.join('')}\r\n${body}`);
}

/**
 * The HTTP server: Fastify with every error — ours, Fastify's, the router's
 * and the HTTP parser's — rendered as problem+json in one place.
 */
export function buildServer(app: App): FastifyInstance {
  const server = Fastify({
    loggerInstance: app.logger as FastifyBaseLogger,
    // The client's address (sign-in throttling) from X-Forwarded-For, only through trusted proxies.
    ...(app.config.trustProxy !== undefined && {
      trustProxy:
        typeof app.config.trustProxy === 'number'
          ? (_address: string, hop: number) => hop < (app.config.trustProxy as number)
          : app.config.trustProxy,
    }),
    // One log line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // Built only when a request writes a line (request-logger.ts).
    childLoggerFactory: (logger, bindings, options) => new RequestLogger(logger as Logger, bindings, options),
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: 500 },
    return503OnClosing: true,
    // Node answers a missing Host with an empty 400; the onRequest hook below answers in problem+json.
    http: { requireHostHeader: false },
    requestIdHeader: 'x-request-id',
    // Router-level failures (malformed percent-encoding in the path…).
    frameworkErrors: (error, _request, reply) => {
      sendProblem(reply.headers(COMMON_HEADERS), toDocwrightError(error));
    },
    // Failures before a request exists (bad request line, oversized headers):
    // answer in problem+json too, straight onto the socket.
    clientErrorHandler: (error: Error & { code?: string }, socket: Duplex) => {
      if (!socket.writable) return socket.destroy();
      endWithProblem(
        socket,
        error.code === 'HPE_HEADER_OVERFLOW'
          ? new DocwrightError('headers-too-large', 'request headers are too large')
          : new DocwrightError('invalid-request', 'malformed HTTP request'),
      );
    },
  });

  server.decorate('eventStreams', new OpenStreams(app.config.streams));

  // Node hands CONNECT to 'connect' listeners and, without one, drops the
  // connection unanswered. No route serves it: 404 like any other method.
  server.server.on('connect', (request, socket: Duplex) => {
    // The HTTP server no longer watches this socket: a client that resets it
    // must not crash us, and what it still sends is drained so that the
    // connection can finish closing.
    socket.on('error', () => socket.destroy());
    socket.resume();
    endWithProblem(socket, new DocwrightError('not-found', `no route CONNECT ${request.url}`));
  });

  // Node answers an Expect other than 100-continue with a bare 417; this one is in problem+json.
  server.server.on('checkExpectation', (_request, response) => {
    const { body, headers } = rawProblem(
      new DocwrightError('expectation-failed', 'the only supported expectation is Expect: 100-continue'),
    );
    response.writeHead(errorStatus['expectation-failed'], headers).end(body);
  });

  const logsRequests = app.logger.isLevelEnabled('info');

  // Only JSON bodies are accepted (415 for the rest).
  server.removeContentTypeParser(['text/plain']);

  server.decorateRequest('principal', null);

  // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (Node's own check is off, see above).
  server.addHook('onRequest', async (request, reply) => {
    reply.headers(COMMON_HEADERS);
    const { httpVersionMajor, httpVersionMinor } = request.raw;
    if (httpVersionMajor === 1 && httpVersionMinor === 1 && request.headers.host === undefined) {
      throw new DocwrightError('invalid-request', 'the Host header is missing');
    }
  });

  server.addHook('preValidation', async (request) => {
    if (request.body === undefined) return;
    const refusal = refusedJson(request.body);
    if (refusal) throw new DocwrightError('invalid-request', `the request body ${refusal}`);
  });

  server.setErrorHandler(async (error, request, reply) => {
    const problem = toDocwrightError(error, request.routeOptions.bodyLimit);
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
    const route = request.routeOptions.url ?? 'unmatched';
    app.metrics.httpRequests.inc({ method: request.method, route, status: reply.statusCode });
    if (!logsRequests) return;
    request.log.info(
      {
        method: request.method,
        url: loggableUrl(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
  });

  registerMetaRoutes(
    server,
    app,
    buildOpenApiDocument({ promptMaxChars: app.config.promptMaxChars, version: VERSION }),
  );
  registerJobRoutes(server, app);
  registerAutomationRoutes(server, app);
  registerDashboard(server, app);
  registerV1Routes(server, app);
  registerHookRoutes(server, app);
  registerSlackRoutes(server, app);
  return server;
}
