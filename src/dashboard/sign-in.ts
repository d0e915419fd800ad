import type { FastifyInstance, FastifyReply } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { checkNewOperator, normaliseEmail } from '../operators/operators.ts';
import { PASSWORD_MIN_CHARS } from '../operators/passwords.ts';
import type { SignInThrottle } from '../operators/sign-in-throttle.ts';
import { FIRST_RUN_PATH } from './first-run.ts';
import { html } from './html.ts';
import { fieldError, formErrors, invalid, page, sendHtml } from './layout.ts';
import { SESSION_COOKIE, SESSION_MAX_AGE_MS, sessionCookieOptions } from './session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'firstRunLinks' | 'operators' | 'sessions'>;

type Form = Record<string, string | undefined>;

/** An origin no request has, to tell paths of this site from everything else. */
const HERE = 'http://docwright.invalid';

/** Tabs and line breaks, which browsers drop from a URL (`/<TAB>/host` is `//host`), and other controls. */
const hasControlCharacter = (text: string) =>
  [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/**
 * Where to send the browser after sign-in: a path of this site, else `/`. Never `//host` or
 * `/\host` (another origin to a browser, also once dot segments are resolved: `/.//host`), and
 * percent-encoded as the URL parser writes it, so that a Location header can carry it.
 */
export function safeNext(next: string | undefined): string {
  if (typeof next !== 'string' || !next.startsWith('/') || next.includes('\\') || hasControlCharacter(next))
    return '/';
  const url = URL.parse(next, HERE);
  if (url?.origin !== HERE || url.pathname.startsWith('//')) return '/';
  return `${url.pathname}${url.search}${url.hash}`;
}

function signInPage(options: { next: string; email?: string; error?: string; notice?: string }) {
  return page({
    title: 'Sign in',
    body: html`<div class="panel narrow">
  <h1>Sign in to docwright</h1>
  <p class="muted">Use your operator account. An administrator adds accounts under Operators, or with <code>docwright user create</code>.</p>
  ${options.notice && html`<div class="flash" role="status">${options.notice}</div>`}
  ${options.error && html`<div class="alert" role="alert">${options.error}</div>`}
  <form method="post" action="/login" class="stack">
    <input type="hidden" name="next" value="${options.next}">
    <div class="field"><label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}" ${options.email ? '' : html`autofocus`}></div>
    <div class="field"><label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required ${options.email ? html`autofocus` : ''}></div>
    <button type="submit" class="primary">Sign in</button>
  </form>
</div>`,
  });
}

/** Starts a session (a new id at every sign-in) and sends the browser on. */
async function signIn(
  app: AppUses,
  reply: FastifyReply,
  operatorId: string,
  oldToken: string | undefined,
  next: string,
) {
  if (oldToken) await app.sessions.revoke(oldToken);
  const { token } = await app.sessions.create(operatorId, { ttlMs: SESSION_MAX_AGE_MS });
  reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(app));
  return reply.header('cache-control', 'no-store').redirect(next, 303);
}

/** `/login`, `/logout` and the first-run page. */
export function registerSignInRoutes(server: FastifyInstance, app: AppUses, throttle: SignInThrottle): void {
  const open = { config: { public: true } };

  server.get<{ Querystring: Form }>('/login', open, async (request, reply) => {
    const next = safeNext(request.query.next);
    const current = request.cookies[SESSION_COOKIE];
    if (current && (await app.sessions.resolve(current))) return reply.redirect(next, 303);
    return sendHtml(reply, signInPage({ next }));
  });

  server.post<{ Body: Form }>('/login', open, async (request, reply) => {
    const body = request.body ?? {};
    const email = typeof body.email === 'string' ? body.email : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const next = safeNext(body.next);
    const decision = await throttle.begin(normaliseEmail(email).slice(0, 320), request.ip);
    if (!decision.allowed) {
      const minutes = Math.ceil(decision.retryAfterSeconds / 60);
      const error = `Too many failed sign-ins. Wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again, or ask an administrator to set a new password (docwright user password).`;
      reply.header('retry-after', String(decision.retryAfterSeconds));
      return sendHtml(reply, signInPage({ next, email, error }), 429);
    }
    let operator: Awaited<ReturnType<App['operators']['verify']>>;
    try {
      operator = await app.operators.verify(email, password);
    } catch (error) {
      if (error instanceof DocwrightError && error.code === 'unauthorized') {
        return sendHtml(
          reply,
          signInPage({ next, email, error: 'The email or password is not correct.' }),
          401,
        );
      }
      await throttle.abandon(decision.attemptId);
      throw error;
    }
    await throttle.succeeded(decision.attemptId, normaliseEmail(email));
    return signIn(app, reply, operator.id, request.cookies[SESSION_COOKIE], next);
  });

  server.post('/logout', async (request, reply) => {
    if (request.signedIn) await app.sessions.revoke(request.signedIn.token);
    reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(app));
    return sendHtml(reply, signInPage({ next: '/', notice: 'You are signed out.' }));
  });

  const setupPage = (token: string, values: Form = {}, error?: DocwrightError) =>
    page({
      title: 'Create your account',
      body: html`<div class="panel narrow">
  <h1>Welcome to docwright</h1>
  <p class="muted">Create the first operator account. You can add more people later under Operators.</p>
  ${error && formErrors(error.message, error.fields, { email: 'Email', password: 'Password' })}
  <form method="post" action="${FIRST_RUN_PATH}" class="stack">
    <input type="hidden" name="token" value="${token}">
    <div class="field"><label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${values.email ?? ''}" ${invalid(error?.fields, 'email')}>
      ${fieldError(error?.fields, 'email')}</div>
    <div class="field"><label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_CHARS}" ${invalid(error?.fields, 'password', 'password-hint')}>
      <p class="hint" id="password-hint">At least ${PASSWORD_MIN_CHARS} characters.</p>
      ${fieldError(error?.fields, 'password')}</div>
    <button type="submit" class="primary">Create account and sign in</button>
  </form>
</div>`,
    });

  const linkSpent = () =>
    new DocwrightError(
      'not-found',
      'This setup link is no longer valid: an account exists already, or the link expired. Sign in, or restart docwright for a new link, or run docwright user create.',
    );

  server.get<{ Querystring: Form }>(FIRST_RUN_PATH, open, async (request, reply) => {
    const token = request.query.token ?? '';
    if (!(await app.firstRunLinks.valid(token))) throw linkSpent();
    return sendHtml(reply.header('cache-control', 'no-store'), setupPage(token));
  });

  server.post<{ Body: Form }>(FIRST_RUN_PATH, open, async (request, reply) => {
    const body = request.body ?? {};
    const token = body.token ?? '';
    if (!(await app.firstRunLinks.valid(token))) throw linkSpent();
    const input = { email: body.email ?? '', password: body.password ?? '' };
    // A mistake in the form leaves the link as it was.
    try {
      checkNewOperator(input);
    } catch (error) {
      if (error instanceof DocwrightError && error.fields) {
        return sendHtml(reply, setupPage(token, body, error), 400);
      }
      throw error;
    }
    const claim = await app.firstRunLinks.claim(token);
    if (!claim) throw linkSpent();
    let created: Awaited<ReturnType<App['operators']['createFirst']>>;
    try {
      created = await app.operators.createFirst(input);
    } catch (error) {
      // No account was made (the hash thread was busy, the database failed…): the link still works.
      await claim
        .giveBack()
        .catch((lost: unknown) => request.log.warn({ err: lost }, 'the setup link is lost'));
      throw error;
    }
    if (!created) throw linkSpent();
    // Signed in at once: the operators page must not say "Last sign-in: never" (issue 35).
    await app.operators.recordSignIn(created.id);
    return signIn(app, reply, created.id, undefined, '/projects/new');
  });
}
