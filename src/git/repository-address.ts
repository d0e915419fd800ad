/**
 * Repositories on link-local and cloud metadata addresses are refused (docs/security.mdx,
 * "Repository addresses"): a repository URL naming 169.254.169.254 or `metadata.google.internal`
 * would make git and the code host's client ask the cloud's metadata service, with a token.
 * Private and loopback addresses stay allowed: internal hosts live there. The URL's name is
 * resolved, both when a repository is saved and each time git is about to contact it, so that a
 * name that later resolves to such an address is caught too. `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1`
 * turns the check off.
 */
import dns from 'node:dns/promises';
import { ipLiteral, isLinkLocalOrMetadata } from '../public-address.ts';
import { HostError } from './hosts/host.ts';

/** The server setting that allows such repositories. */
export const ALLOW_LINK_LOCAL_VARIABLE = 'DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL';

/** Names of metadata services, refused whatever they resolve to (here they may resolve to nothing). */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** A lookup that takes longer is given up: the name is then judged by git's own failure. */
const LOOKUP_TIMEOUT_MS = 5_000;

/** Every address `name` resolves to; none when it does not resolve (in time). */
async function addressesOf(name: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
  });
  const resolved = dns.lookup(name, { all: true, verbatim: true }).then(
    (found) => found.map((entry) => entry.address),
    () => [],
  );
  try {
    return await Promise.race([resolved, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why the http(s) URL `url` may not be contacted as a repository or its API, or undefined
 * (also for other URLs, and for a name that does not resolve: contacting it fails by itself).
 */
export async function linkLocalProblem(url: string): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  const literal = ipLiteral(parsed.hostname);
  const name = parsed.hostname.toLowerCase().replace(/\.$/, '');
  const refused = (what: string) =>
    `${what} a link-local or cloud metadata address; repositories there are refused ` +
    `(set ${ALLOW_LINK_LOCAL_VARIABLE}=1 on the server to allow them)`;
  if (literal !== undefined) return isLinkLocalOrMetadata(literal) ? refused(`${literal} is`) : undefined;
  if (METADATA_NAMES.has(name)) return refused(`${name} is the name of`);
  const found = (await addressesOf(name)).find(isLinkLocalOrMetadata);
  return found === undefined ? undefined : refused(`${name} resolves to ${found},`);
}

/**
 * Throws `repository-address-refused` when `url` may not be contacted (see `linkLocalProblem`),
 * unless `allowLinkLocal`. Called right before git contacts a remote.
 */
export async function checkRemoteAddress(url: string, allowLinkLocal: boolean): Promise<void> {
  if (allowLinkLocal) return;
  const problem = await linkLocalProblem(url);
  if (problem !== undefined) {
    throw new HostError('repository-address-refused', `git did not contact ${url}: ${problem}`);
  }
}

/**
 * The same refusal for a code host's API requests: each origin's name is resolved once per
 * check (a host lives for one run or one call), before its first request.
 */
export function apiAddressCheck(allowLinkLocal: boolean): (url: URL) => Promise<void> {
  const checked = new Map<string, Promise<void>>();
  return (url) => {
    if (allowLinkLocal) return Promise.resolve();
    let check = checked.get(url.origin);
    if (check === undefined) {
      check = linkLocalProblem(url.href).then((problem) => {
        if (problem === undefined) return;
        throw new HostError('repository-address-refused', `docwright did not call ${url.origin}: ${problem}`);
      });
      checked.set(url.origin, check);
    }
    return check;
  };
}
