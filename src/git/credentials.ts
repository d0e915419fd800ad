/**
 * Credentials for git over HTTPS, carried in the environment only (docs/git.mdx): never in the
 * remote URL, a command-line argument or a file in the checkout. git (2.31+) reads
 * `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` as command-line-level
 * configuration, and its HTTP transport sends `http.<url>.extraheader` with every request to
 * URLs under `<url>` — here the remote's origin. That match is made once, for the remote's URL:
 * after a redirect git sends its later requests to the redirect's base with the same header, so
 * with credentials git follows no redirect at all (`http.<url>.followRedirects false`), and the
 * header goes to no other host (docs/security.mdx, "Credentials stay with their host").
 */

export interface GitCredentials {
  /**
   * The Basic user name the host expects with a token: GitHub `x-access-token`, GitLab
   * `oauth2`, Gitea/Forgejo any non-empty name.
   */
  username: string;
  token: string;
}

const HEADER = /^Authorization:\s*(Basic|Bearer)\s+(\S+)\s*$/i;

/** The origin of an http(s) remote, refusing URLs that carry credentials themselves. */
function remoteOrigin(remoteUrl: string): string {
  let url: URL;
  try {
    url = new URL(remoteUrl);
  } catch {
    throw new Error('the remote is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`credentials can only be sent to an http(s) remote, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new Error('the remote URL must not carry credentials');
  }
  return url.origin;
}

/**
 * The environment that makes git authenticate to `remoteUrl`'s origin with HTTP Basic
 * `username:token`. Merge it into the environment of every git command that talks to the
 * remote (clone, ls-remote, fetch, push). Empty when there is no token (anonymous access).
 * It uses config slots 0…n-1, so it replaces any `GIT_CONFIG_COUNT` of the caller.
 */
export function gitCredentialEnv(remoteUrl: string, credentials: GitCredentials): Record<string, string> {
  const origin = remoteOrigin(remoteUrl);
  if (credentials.token === '') return {};
  if (credentials.username === '' || credentials.username.includes(':')) {
    throw new Error('the git user name must be non-empty and contain no colon');
  }
  if (/[\r\n]/.test(credentials.token) || /[\r\n]/.test(credentials.username)) {
    throw new Error('credentials must not contain line breaks');
  }
  const basic = Buffer.from(`${credentials.username}:${credentials.token}`, 'utf8').toString('base64');
  return {
    GIT_CONFIG_COUNT: '2',
    // The trailing slash scopes the header to every path on the origin (git matches URL prefixes).
    GIT_CONFIG_KEY_0: `http.${origin}/.extraheader`,
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    GIT_CONFIG_KEY_1: `http.${origin}/.followRedirects`,
    GIT_CONFIG_VALUE_1: 'false',
  };
}

/**
 * The secrets an environment built by {@link gitCredentialEnv} carries — the header
 * credential, and for Basic the decoded `user:token` and the token — for a redactor.
 */
export function credentialSecrets(env: Record<string, string> | undefined): string[] {
  if (!env) return [];
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('GIT_CONFIG_VALUE_')) continue;
    const match = HEADER.exec(value);
    if (!match) continue;
    const credential = match[2]!;
    secrets.push(credential);
    if (match[1]!.toLowerCase() === 'basic') {
      const decoded = Buffer.from(credential, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon >= 0) secrets.push(decoded.slice(colon + 1));
    }
  }
  return secrets;
}
