import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { DocwrightError } from '../errors.ts';
import { HOST_KINDS, type HostKind } from '../git/hosts/host.ts';
import { localRepositoryProblem } from '../git/inspect.ts';
import { linkLocalProblem } from '../git/repository-address.ts';
import { normalRepositoryUrl } from '../git/repository-url.ts';
import { ipLiteral, isPublicAddress } from '../public-address.ts';

export const HOSTS = HOST_KINDS;
export type { HostKind };

/** Well-known public hosts; anything else (self-managed) needs an explicit `host`. */
const knownHosts: Record<string, HostKind> = {
  'github.com': 'github',
  'gitlab.com': 'gitlab',
  'gitea.com': 'gitea',
  'codeberg.org': 'gitea',
};

export interface ParsedRepository {
  /** Normalised URL: no credentials, no trailing `.git` or `/`; `file://` for local paths. */
  url: string;
  /** The host detected from the URL, when it can be. */
  detectedHost: HostKind | undefined;
}

/**
 * Hosts on this machine or a private network: an address that is not public (the classifier
 * of the webhooks' egress guard, ../public-address.ts), or a name that cannot be on the public
 * internet.
 */
function isPrivateHost(hostname: string): boolean {
  const literal = ipLiteral(hostname);
  if (literal !== undefined) return !isPublicAddress(literal);
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return (
    host === 'localhost' || !host.includes('.') || /\.(local|internal|lan|home\.arpa|localhost)$/.test(host)
  );
}

/**
 * Validates a project's `repository` (docs/configuration.mdx) and returns its normal form,
 * or a message saying what is wrong with it.
 */
export function parseRepository(input: string, cwd = process.cwd()): ParsedRepository | { error: string } {
  const value = input.trim();
  if (value === '') return { error: 'must not be empty' };
  if (value.startsWith('/') || value.startsWith('.') || value.startsWith('~')) {
    if (value.startsWith('~')) return { error: 'use an absolute path instead of ~' };
    return { url: pathToFileURL(path.resolve(cwd, value)).href.replace(/\/+$/, ''), detectedHost: 'local' };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { error: 'must be an https:// URL, a file:// URL or an absolute path' };
  }
  if (url.protocol === 'file:') {
    if (url.host !== '') return { error: 'file:// URLs must name a path on this machine (file:///path)' };
    return { url: url.href.replace(/\/+$/, ''), detectedHost: 'local' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return {
      error: `unsupported scheme ${url.protocol.replace(':', '')}: use https (or http on a private network)`,
    };
  }
  if (url.protocol === 'http:' && !isPrivateHost(url.hostname)) {
    return { error: 'http is allowed only for hosts on loopback or a private network; use https' };
  }
  if (url.username || url.password) {
    return { error: 'must not contain credentials; give the token separately' };
  }
  if (url.search || url.hash) return { error: 'must not contain a query or fragment' };
  const normal = normalRepositoryUrl(url);
  const segments = new URL(normal).pathname.split('/').filter(Boolean);
  if (segments.length < 2) return { error: 'must name a repository as https://host/owner/name' };
  return { url: normal, detectedHost: knownHosts[url.hostname.toLowerCase()] };
}

/**
 * A repository and its host as a project or a context repository stores them (docs/configuration.mdx, docs/code-context.mdx):
 * the URL validated and normalised, the host detected or checked against it, a local repository
 * checked to exist. Throws `invalid-request` naming the field (`repository` or `host`).
 */
export async function resolveRepository(input: {
  repository: string;
  host?: HostKind | undefined;
}): Promise<{ url: string; host: HostKind }> {
  const parsed = parseRepository(input.repository);
  if ('error' in parsed) {
    throw new DocwrightError('invalid-request', `repository ${parsed.error}`, {
      fields: [{ field: 'repository', message: parsed.error }],
    });
  }
  const host = input.host ?? parsed.detectedHost;
  if (!host) {
    const message = `cannot tell the code host of ${new URL(parsed.url).hostname}; set host to github, gitlab or gitea`;
    throw new DocwrightError('invalid-request', message, { fields: [{ field: 'host', message }] });
  }
  if ((host === 'local') !== parsed.url.startsWith('file://')) {
    const message =
      host === 'local'
        ? 'host local needs a local path or file:// repository'
        : `host ${host} needs an http(s) repository URL`;
    throw new DocwrightError('invalid-request', message, { fields: [{ field: 'host', message }] });
  }
  if (host === 'local') {
    const message = await localRepositoryProblem(fileURLToPath(parsed.url));
    if (message) {
      throw new DocwrightError('invalid-request', message, { fields: [{ field: 'repository', message }] });
    }
  }
  return { url: parsed.url, host };
}

/**
 * Refuses a repository or API URL on a link-local or cloud metadata address, its name resolved
 * now (docs/security.mdx, "Repository addresses"), unless the server allows them
 * (`DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1`). git checks again before each contact. Throws
 * `invalid-request` naming the field.
 */
export async function checkRepositoryAddresses(
  urls: { repository?: string | undefined; apiUrl?: string | null | undefined },
  allowLinkLocal: boolean,
): Promise<void> {
  if (allowLinkLocal) return;
  for (const field of ['repository', 'apiUrl'] as const) {
    const url = urls[field];
    if (!url) continue;
    const problem = await linkLocalProblem(url);
    if (problem !== undefined) {
      throw new DocwrightError('invalid-request', `${field} ${problem}`, {
        fields: [{ field, message: problem }],
      });
    }
  }
}
