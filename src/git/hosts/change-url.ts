/**
 * Pull/merge request and commit URLs (docs/code-context.mdx): GitHub `…/pull/N`, GitLab
 * `…/-/merge_requests/N`, Gitea/Forgejo `…/pulls/N`, and `…/commit/<sha>` (GitLab
 * `…/-/commit/<sha>`) on each. Pure: nothing is fetched. Which of them belong to a configured
 * repository is the caller's to decide, with `sameRepository` (../repository-url.ts) on
 * `repositoryUrl`; a URL of any other repository must stay text.
 */
import { normalRepositoryUrl, repositoryKey } from '../repository-url.ts';

export type ChangeUrl = {
  /** The repository's URL in the normal form of projects' repositories. */
  repositoryUrl: string;
  /** The URL as it was found. */
  url: string;
} & ({ kind: 'pull-request'; number: number } | { kind: 'commit'; sha: string });

/** Change URLs found in one text at most (docs/code-context.mdx allows 20 changes per job). */
export const MAX_CHANGE_URLS = 20;

/** Longer candidates are not URLs anyone pasted: skipped unread. */
const MAX_URL_LENGTH = 2_048;

const NUMBER = /^[1-9]\d{0,9}$/;
const SHA = /^[0-9a-f]{7,64}$/i;
const MAX_NUMBER = 2_147_483_647;

/** A change number as hosts allow it (positive, 32-bit), or undefined. */
function changeNumber(segment: string | undefined): number | undefined {
  if (segment === undefined || !NUMBER.test(segment)) return undefined;
  const value = Number(segment);
  return value <= MAX_NUMBER ? value : undefined;
}

/**
 * The change a URL names, or undefined when it names none: not http(s), credentials in it, or
 * no change path. The repository is what comes before the change's marker, at least
 * `owner/name` (GitLab: the whole namespace; Gitea under a sub-path: that path too).
 */
export function parseChangeUrl(text: string): ChangeUrl | undefined {
  if (text.length > MAX_URL_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    return undefined;
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const repository = (end: number) =>
    normalRepositoryUrl(new URL(`/${segments.slice(0, end).join('/')}`, url));
  for (let i = 2; i < segments.length; i++) {
    const marker = segments[i];
    const [next, after] = [segments[i + 1], segments[i + 2]];
    if (marker === '-') {
      // GitLab: a project path never has a `-` segment, so the first one is the marker.
      const number = next === 'merge_requests' ? changeNumber(after) : undefined;
      if (number !== undefined)
        return { repositoryUrl: repository(i), url: text, kind: 'pull-request', number };
      if (next === 'commit' && after !== undefined && SHA.test(after)) {
        return { repositoryUrl: repository(i), url: text, kind: 'commit', sha: after.toLowerCase() };
      }
      return undefined;
    }
    // GitHub's `pull` only follows owner/name; Gitea's `pulls` may follow a sub-path too.
    const number = (marker === 'pull' && i === 2) || marker === 'pulls' ? changeNumber(next) : undefined;
    if (number !== undefined)
      return { repositoryUrl: repository(i), url: text, kind: 'pull-request', number };
    if (marker === 'commit' && next !== undefined && SHA.test(next)) {
      return { repositoryUrl: repository(i), url: text, kind: 'commit', sha: next.toLowerCase() };
    }
  }
  return undefined;
}

/**
 * A URL in running text: the characters a URL may hold unescaped, but quotes, brackets and
 * parentheses (Markdown and prose put those around URLs). Anything else — whitespace, any
 * non-ASCII letter or mark, CJK punctuation — ends it.
 */
const CANDIDATE = /https?:\/\/[A-Za-z0-9\-._~:/?#@!$&*+,;=%]+/gi;
/** Punctuation that ends a sentence rather than the URL. */
const TRAILING = /[.,;:!?*_~]+$/;

/**
 * The change URLs in a text (a prompt), in order, each change once, at most `max`. Linear in the
 * text's length whatever it holds: one pass of a regular expression without nested repetition,
 * and each candidate parsed once.
 */
export function findChangeUrls(text: string, max = MAX_CHANGE_URLS): ChangeUrl[] {
  const found: ChangeUrl[] = [];
  const seen = new Set<string>();
  const candidates = new RegExp(CANDIDATE);
  for (let match = candidates.exec(text); match !== null; match = candidates.exec(text)) {
    if (found.length >= max) break;
    const candidate = match[0].replace(TRAILING, '');
    const change = parseChangeUrl(candidate);
    if (!change) continue;
    const key = `${repositoryKey(change.repositoryUrl)} ${change.kind === 'commit' ? change.sha : change.number}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(change);
  }
  return found;
}
