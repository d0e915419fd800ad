/**
 * Redirects of the code hosts' APIs, followed by hand (docs/security.mdx, "Credentials stay with
 * their host"). fetch would carry a custom credential header — GitLab's `private-token` — to
 * whatever origin a redirect names: it drops only `Authorization` and `Cookie`. Here a redirect
 * within the request's origin is followed; one to another origin is followed only by a request
 * that carries no credential at all, and otherwise refused with an error naming both origins.
 */

/** Redirects followed for one request (fetch's own limit is 20; an API needs one or two). */
export const MAX_REDIRECTS = 10;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Header names that carry a credential: `Authorization`, `private-token`, `job-token`, cookies,
 * and any custom header naming a token, key, secret or session.
 */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|token|secret|key|session|password/i;

/** Query parameters that carry a credential (`access_token`, `private_token`, `key`, `sig`…). */
const CREDENTIAL_PARAMETER = /token|secret|key|session|password|signature|^sig$/i;

/** A redirect that was not followed, with what the caller may say about it (no secret in it). */
export class RedirectRefused extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'RedirectRefused';
    this.status = status;
  }
}

export interface RedirectRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

/** Whether a request would hand a credential to whoever receives it. */
export function carriesCredentials(url: URL, headers: Record<string, string>): boolean {
  if (url.username !== '' || url.password !== '') return true;
  if (Object.entries(headers).some(([name, value]) => value !== '' && CREDENTIAL_HEADER.test(name))) {
    return true;
  }
  return [...url.searchParams.keys()].some((name) => CREDENTIAL_PARAMETER.test(name));
}

/**
 * The request a redirect asks for, as fetch would make it: 303, and 301/302 after a POST,
 * become a GET without a body.
 */
function redirected(status: number, init: RedirectRequest): RedirectRequest {
  if (status === 303 || ((status === 301 || status === 302) && init.method === 'POST')) {
    const { 'content-type': _type, ...headers } = init.headers;
    return { method: 'GET', headers };
  }
  return init;
}

/**
 * `fetch(url, init)` with redirects followed under the rule above. The answer is the first one
 * that is not a redirect (or a redirect without a `Location`); refusals throw `RedirectRefused`.
 */
export async function fetchWithinOrigin(
  fetcher: typeof fetch,
  url: URL,
  init: RedirectRequest,
  signal: AbortSignal,
  /** Asked before a redirect to another origin is followed (the address guard); a refusal stops it. */
  checkUrl?: (url: URL) => Promise<void>,
): Promise<Response> {
  let current = url;
  let request = init;
  for (let hop = 0; ; hop++) {
    const response = await fetcher(current, { ...request, redirect: 'manual', signal });
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
    await response.body?.cancel().catch(() => {});
    const target = nextUrl(response.status, current, location);
    if (hop >= MAX_REDIRECTS) {
      throw new RedirectRefused(response.status, `${url.origin} redirected more than ${MAX_REDIRECTS} times`);
    }
    if (target.origin !== url.origin && carriesCredentials(current, request.headers)) {
      throw new RedirectRefused(
        response.status,
        `${current.origin} redirected to another origin, ${target.origin} (HTTP ${response.status}); ` +
          'the request carries credentials, which docwright sends only to the origin they are ' +
          'configured for, so the redirect was not followed (set the API URL to the address that answers)',
      );
    }
    if (target.origin !== current.origin && checkUrl) {
      await checkUrl(target).catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        throw new RedirectRefused(
          response.status,
          `${current.origin} redirected to ${target.origin}: ${reason}`,
        );
      });
    }
    request = redirected(response.status, request);
    current = target;
  }
}

/** Where a redirect points, when it is an http(s) URL. */
function nextUrl(status: number, from: URL, location: string): URL {
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    throw new RedirectRefused(status, `${from.origin} redirected to something that is not a URL`);
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    throw new RedirectRefused(
      status,
      `${from.origin} redirected to a ${target.protocol} URL, which is not followed`,
    );
  }
  return target;
}
