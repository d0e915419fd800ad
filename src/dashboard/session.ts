import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import type { OperatorView } from '../operators/operators.ts';
import type { SessionView } from '../operators/sessions.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'sessions'>;

/** docs/dashboard.mdx: the session cookie. */
export const SESSION_COOKIE = 'docwright_session';
/** A one-time message (and a new key) carried across a redirect; sealed with the session's secret. */
const FLASH_COOKIE = 'docwright_flash';
/** Longest a session lasts however busy it is; idle sessions end after 12 hours (sessions.ts). */
export const SESSION_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** The signed-in operator of a dashboard request. */
export interface SignedIn {
  operator: OperatorView;
  session: SessionView;
  /** The session's token (the cookie's value), e.g. to sign it out. */
  token: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for dashboard pages once the session cookie resolved. */
    signedIn: SignedIn | null;
  }
}

export function sessionCookieOptions(app: AppUses): CookieSerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: app.config.publicUrl?.startsWith('https:') ?? false,
  };
}

export async function resolveSignedIn(app: AppUses, request: FastifyRequest): Promise<SignedIn | null> {
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return null;
  const resolved = await app.sessions.resolve(token);
  return resolved ? { ...resolved, token } : null;
}

const crossSite = () =>
  new DocwrightError(
    'forbidden',
    'this request came from another site; submit the form from the dashboard itself (behind a proxy, set DOCWRIGHT_PUBLIC_URL to the address browsers use)',
  );

/**
 * Whether `origin` is the dashboard's: the public URL's origin, or without one the request's own
 * scheme and host (the scheme as the connection says, or X-Forwarded-Proto from a trusted proxy:
 * `https://host` is another origin than `http://host`).
 */
function sameOrigin(app: AppUses, request: FastifyRequest, origin: string): boolean {
  const { host } = request.headers;
  const own = app.config.publicUrl ?? (host === undefined ? undefined : `${request.protocol}://${host}`);
  const [ours, given] = [URL.parse(own ?? ''), URL.parse(origin)];
  return ours !== null && given !== null && given.origin === ours.origin;
}

/**
 * A state-changing request must come from the dashboard itself (docs/dashboard.mdx): a browser names the
 * page's origin in `Origin` (or at least says `Sec-Fetch-Site: same-origin`). A request with
 * neither header comes from no browser, so no other site can have caused it.
 */
export function checkSameOrigin(app: AppUses, request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (!sameOrigin(app, request, origin)) throw crossSite();
    return;
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw crossSite();
}

/** The session's CSRF token, from the `_csrf` form field or the `X-CSRF-Token` header. */
export function checkCsrfToken(request: FastifyRequest, signedIn: SignedIn): void {
  const header = request.headers['x-csrf-token'];
  const { body } = request;
  const field = typeof body === 'object' && body !== null && '_csrf' in body ? body._csrf : undefined;
  const sent = typeof header === 'string' ? header : typeof field === 'string' ? field : '';
  const expected = Buffer.from(signedIn.session.csrfSecret);
  const given = Buffer.from(sent);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new DocwrightError(
      'forbidden',
      'the form has expired or did not come from this dashboard; reload the page and submit it again',
    );
  }
}

/** What the next page shows once: a notice, a new API key, or a new webhook endpoint's secret. */
export interface Flash {
  notice?: string;
  /** About the run under way: the job page shows it while the job is active and drops it when it ends. */
  progress?: string;
  newKey?: { id: string; key: string };
  newWebhook?: { id: string; url: string; secret: string };
  /** A context repository just added: its webhook URL and secret, shown once (docs/code-context.mdx). */
  newContextRepository?: { name: string; webhookUrl: string; webhookSecret: string };
}

const flashKey = (signedIn: SignedIn) =>
  createHash('sha256').update(`docwright-flash\0${signedIn.session.csrfSecret}`).digest();

/** Sets a flash for the next page: AES-GCM with a key only this session has, for five minutes. */
export function setFlash(reply: FastifyReply, app: AppUses, signedIn: SignedIn, flash: Flash): void {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(signedIn), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(flash)), cipher.final()]);
  const value = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  reply.setCookie(FLASH_COOKIE, value, { ...sessionCookieOptions(app), maxAge: 300 });
}

/** Reads and clears the flash; a reload no longer shows it. */
export function takeFlash(request: FastifyRequest, reply: FastifyReply, app: AppUses): Flash {
  const value = request.cookies[FLASH_COOKIE];
  if (!value || !request.signedIn) return {};
  reply.clearCookie(FLASH_COOKIE, sessionCookieOptions(app));
  try {
    const bytes = Buffer.from(value, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', flashKey(request.signedIn), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const text = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString();
    return JSON.parse(text) as Flash;
  } catch {
    return {};
  }
}
