/** Which files are pages of a site, and the navigation's pages resolved to them. */
import { walkFiles } from '../walk.ts';
import { normalizeRel, relativeTo, safeStat } from './repo-files.ts';
import type { NavNode, SiteInfo } from './types.ts';

/** A walk for pages stops after this many files, so a huge tree cannot stall detection. */
const MAX_WALK_FILES = 100_000;
/** Repository files that are not pages even though they are Markdown. */
const NON_PAGE_FILES =
  /^(readme|contributing|changelog|license|licence|code_of_conduct|security|agents|claude|gemini|fixture)\.md$/i;
export const PAGE_EXTENSION = /\.mdx?$/;
/** Sphinx pages: reStructuredText, and MyST Markdown where conf.py enables it. */
const SPHINX_EXTENSION = /\.(rst|md|txt)$/;
const SKIP_DIRS = new Set(['node_modules', '__pycache__']);

/** Every file under `dir` that git would list (src/agent/walk.ts); none when it is not a directory. */
export async function listFiles(
  site: Pick<SiteInfo, 'root'>,
  dir: string,
): Promise<{ files: string[]; truncated: boolean }> {
  if ((await safeStat(site.root, dir)) !== 'dir') return { files: [], truncated: false };
  return walkFiles(site.root, normalizeRel(dir), { maxFiles: MAX_WALK_FILES });
}

/** Whether a repository-relative file counts as a page of this site (navigable Markdown/MDX). */
export function isPage(site: Pick<SiteInfo, 'kind' | 'contentDir'>, file: string): boolean {
  const rel = relativeTo(site.contentDir, normalizeRel(file));
  if (rel === null || !(site.kind === 'sphinx' ? SPHINX_EXTENSION : PAGE_EXTENSION).test(rel)) return false;
  const parts = rel.split('/');
  if (parts.some((p) => p.startsWith('.') || SKIP_DIRS.has(p))) return false;
  const name = parts.at(-1)!;
  if (NON_PAGE_FILES.test(name) && !(site.kind === 'markdown' && /^readme\.md$/i.test(name))) return false;
  if (site.kind === 'mintlify' && parts[0] === 'snippets') return false;
  if (site.kind === 'docusaurus' && parts.some((p) => p.startsWith('_'))) return false;
  return true;
}

export async function withPages(
  site: SiteInfo,
  files?: { files: string[]; truncated: boolean },
): Promise<SiteInfo> {
  const listing = files ?? (await listFiles(site, site.contentDir));
  site.pages = listing.files.filter((f) => isPage(site, f));
  site.pagesTruncated = listing.truncated;
  return site;
}

export function collectPages(site: SiteInfo, nodes: NavNode[]): void {
  const seen = new Set<string>();
  const visit = (list: NavNode[]) => {
    for (const node of list) {
      if (node.type === 'section') visit(node.children);
      else if (node.type === 'page' && !seen.has(node.ref)) {
        seen.add(node.ref);
        site.navPages.push({ ref: node.ref, file: node.file });
      }
    }
  };
  visit(nodes);
  site.missing = site.navPages.filter((p) => p.file === null);
}
