/**
 * One normal form of a repository's web URL, for projects (../projects/repository.ts) and for the
 * change URLs found in prompts (hosts/change-url.ts), and one key to tell whether two URLs name
 * the same repository.
 */

/**
 * The normal form of an http(s) repository URL: scheme, host (lower-cased, default port dropped,
 * as `URL` gives them) and path without trailing slashes or `.git`; never credentials, a query
 * or a fragment.
 */
export function normalRepositoryUrl(url: URL): string {
  const pathname = url.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
  return `${url.protocol}//${url.host}${pathname}`;
}

/**
 * A key that two URLs of one repository share: the normal form with its path decoded and, for
 * http(s), lower-cased (GitHub, GitLab and Gitea find owners and repositories whatever their
 * case). `file://` URLs keep their case (file systems may tell it). Undefined for what is not a
 * URL.
 */
export function repositoryKey(repository: string): string | undefined {
  let url: URL;
  try {
    url = new URL(repository.trim());
  } catch {
    return undefined;
  }
  if (url.protocol === 'file:') return url.href.replace(/\/+$/, '');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const segments = normalRepositoryUrl(url).slice(`${url.protocol}//${url.host}`.length).split('/');
  const decoded = segments.map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
  return `${url.protocol}//${url.host}${decoded.join('/')}`.toLowerCase();
}

/** Whether two repository URLs name the same repository (see `repositoryKey`). */
export function sameRepository(a: string, b: string): boolean {
  const key = repositoryKey(a);
  return key !== undefined && key === repositoryKey(b);
}
