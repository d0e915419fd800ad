import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import type { DocwrightError } from '../errors.ts';
import { toDocwrightError } from '../http/problem.ts';
import { registerAssetRoutes } from './assets.ts';
import { registerAutomationPages } from './automations.ts';
import { html } from './html.ts';
import { registerJobPages } from './jobs.ts';
import { registerKeyPages } from './keys.ts';
import { page, sendHtml } from './layout.ts';
import { registerLiveRoutes } from './live.ts';
import { registerOperatorPages } from './operators.ts';
import { registerProjectDeletePages } from './project-delete.ts';
import { registerProjectPages } from './projects.ts';
import { checkCsrfToken, checkSameOrigin, resolveSignedIn } from './session.ts';
import { registerSignInRoutes } from './sign-in.ts';
import { registerWebhookPages } from './webhooks.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<
  App,
  | 'automations'
  | 'config'
  | 'contextRepositories'
  | 'firstRunLinks'
  | 'jobHistory'
  | 'jobs'
  | 'keys'
  | 'now'
  | 'operators'
  | 'projects'
  | 'sessions'
  | 'signInThrottle'
  | 'slack'
  | 'signals'
  | 'webhooks'
>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A dashboard route that needs no session (sign-in, first run). */
    public?: boolean;
  }
}

/**
 * Content-Security-Policy of every page: scripts and styles only from docwright itself, no
 * inline script, no framing, forms only to this origin.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
  "base-uri 'none'",
].join('; ');

const isStateChanging = (request: FastifyRequest) => !['GET', 'HEAD', 'OPTIONS'].includes(request.method);

/** What a person can do about an error, by its code. */
const advice: Partial<Record<DocwrightError['code'], string>> = {
  forbidden: 'Reload the page and try again.',
  'project-not-found': 'It may have been removed; pick a project from the overview.',
  'job-not-found': 'Check the link, or find the job in the project’s job list.',
  'automation-not-found': 'It may have been deleted; the project’s Automations tab lists the rest.',
  'webhook-not-found': 'It may have been deleted; the project’s Webhooks tab lists its endpoints.',
  'delivery-not-found':
    'Its endpoint may have been deleted with its history; the Webhooks tab lists the rest.',
  'service-unavailable': 'The database did not answer. Wait a moment and reload the page.',
  'internal-error': 'Reload the page; if it happens again, the server log has the details.',
};

function errorPage(request: FastifyRequest, reply: FastifyReply, error: DocwrightError) {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  const body = page({
    title: error.status === 404 ? 'Not found' : 'Something went wrong',
    signedIn: request.signedIn,
    body: html`<div class="panel empty">
  <h1>${error.status === 404 ? 'Not found' : error.status === 403 ? 'Not allowed' : 'Something went wrong'}</h1>
  <p>${error.message}</p>
  ${advice[error.code] && html`<p class="muted">${advice[error.code]}</p>`}
  <p><a href="/">Back to projects</a></p>
</div>`,
  });
  return sendHtml(reply, body, error.status);
}

/**
 * The dashboard of docs/dashboard.mdx, served by every `docwright serve`. Its own scope: form bodies
 * and cookies are understood here only (the API keeps answering 415 to anything but JSON), and
 * its errors are pages rather than problem+json.
 */
export function registerDashboard(server: FastifyInstance, app: AppUses): void {
  registerAssetRoutes(server);
  server.register(async (scope) => {
    await scope.register(fastifyCookie);
    await scope.register(fastifyFormbody);
    scope.decorateRequest('signedIn', null);

    scope.addHook('onRequest', async (request, reply) => {
      reply
        .header('content-security-policy', CSP)
        .header('x-frame-options', 'DENY')
        .header('referrer-policy', 'same-origin');
      if (isStateChanging(request)) checkSameOrigin(app, request);
    });

    // After the body is read (the CSRF token may be a form field), before any handler.
    scope.addHook('preHandler', async (request, reply) => {
      request.signedIn = await resolveSignedIn(app, request);
      if (request.routeOptions.config.public) return;
      if (!request.signedIn) {
        // Back here after signing in; after a form post, to the page the form was on.
        const next =
          request.method === 'GET'
            ? request.url
            : (URL.parse(request.headers.referer ?? '/', 'http://x')?.pathname ?? '/');
        return reply.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
      }
      if (isStateChanging(request)) checkCsrfToken(request, request.signedIn);
      reply.header('cache-control', 'no-store');
    });

    scope.setErrorHandler(async (error, request, reply) => {
      const problem = toDocwrightError(error);
      if (problem.status >= 500)
        request.log.error({ err: problem.cause ?? error, code: problem.code }, 'page failed');
      return errorPage(request, reply, problem);
    });

    registerSignInRoutes(scope, app, app.signInThrottle);
    registerProjectPages(scope, app);
    registerProjectDeletePages(scope, app);
    registerKeyPages(scope, app);
    registerWebhookPages(scope, app);
    registerAutomationPages(scope, app);
    registerJobPages(scope, app);
    registerOperatorPages(scope, app);
    registerLiveRoutes(scope, app);
  });
}
