/**
 * One state of an MkDocs site as verification reads it: mkdocs.yml, the files under docs_dir,
 * each page's links and anchors on demand, and (only when the run moved or deleted pages) which
 * pages link to which — built lazily once per tree and shared by the checks.
 */
import path from 'node:path';
import { compileGlob } from '../../glob.ts';
import { type MkdocsConfig, type MkdocsNavItem, readMkdocsConfig } from '../site/mkdocs-config.ts';
import { joinRel, relativeTo } from '../site/repo-files.ts';
import { type MkdocsPage, readMkdocsPage } from './mkdocs-markdown.ts';
import { findSiteConfig } from './site-config.ts';
import type { DocsTree } from './types.ts';

export interface MkdocsIndex {
  configFile: string;
  config: MkdocsConfig;
  /** docs_dir, repository-relative. */
  contentDir: string;
  /** Files under docs_dir, repository-relative. */
  files(): Promise<Set<string>>;
  /** A page's links and anchors, or null when it is not a readable Markdown file. */
  page(file: string): Promise<MkdocsPage | null>;
  /** Whether `not_in_nav` leaves a page out of the nav on purpose. */
  notInNav(file: string): boolean;
  /** Link target file → the pages that link to it. */
  referrers(): Promise<Map<string, Set<string>>>;
}

/** Where a link goes: nowhere to check (URLs, absolute paths), or a file and an anchor. */
export type LinkTarget =
  | { skip: true }
  | { skip: false; file: string; fragment: string | null; outside: boolean };

const cache = new WeakMap<DocsTree, Map<string, Promise<MkdocsIndex | null>>>();

/** The MkDocs site of `tree`, or null when its generator is another (or none). */
export function mkdocsIndex(tree: DocsTree, docsDir: string): Promise<MkdocsIndex | null> {
  const byDir = cache.get(tree) ?? new Map<string, Promise<MkdocsIndex | null>>();
  cache.set(tree, byDir);
  const index = byDir.get(docsDir) ?? build(tree, docsDir);
  byDir.set(docsDir, index);
  return index;
}

/** The files every nav page entry resolves to (existing or not). */
export function navPageFiles(
  index: MkdocsIndex,
): { item: Extract<MkdocsNavItem, { type: 'page' }>; file: string }[] {
  const out: { item: Extract<MkdocsNavItem, { type: 'page' }>; file: string }[] = [];
  const visit = (items: MkdocsNavItem[]) => {
    for (const item of items) {
      if (item.type === 'section') visit(item.children);
      else if (item.type === 'page') out.push({ item, file: joinRel(index.contentDir, item.target) });
    }
  };
  visit(index.config.nav ?? []);
  return out;
}

/** Resolves a link of `page` as MkDocs does: relative to the page's file. */
export function resolveLink(index: MkdocsIndex, page: string, url: string): LinkTarget {
  const trimmed = url.trim();
  if (trimmed === '' || /^[a-z][a-z0-9+.-]*:/i.test(trimmed) || trimmed.startsWith('/'))
    return { skip: true };
  const hash = trimmed.indexOf('#');
  const rawPath = (hash < 0 ? trimmed : trimmed.slice(0, hash)).replace(/\?.*$/, '');
  const fragment = hash < 0 ? null : trimmed.slice(hash + 1);
  let decoded = rawPath;
  try {
    decoded = decodeURI(rawPath);
  } catch {}
  const file = decoded === '' ? page : joinRel(path.posix.dirname(page), decoded);
  return { skip: false, file, fragment, outside: relativeTo(index.contentDir, file) === null };
}

async function build(tree: DocsTree, docsDir: string): Promise<MkdocsIndex | null> {
  const found = await findSiteConfig(tree, docsDir);
  if (found?.kind !== 'mkdocs') return null;
  const text = await tree.readText(found.file);
  if (text === null) return null;
  const config = readMkdocsConfig(text, path.posix.basename(found.file));
  const contentDir = joinRel(path.posix.dirname(found.file), config.docsDir);
  let files: Promise<Set<string>> | null = null;
  let referrers: Promise<Map<string, Set<string>>> | null = null;
  const pages = new Map<string, Promise<MkdocsPage | null>>();
  const page = (file: string) => {
    const known = pages.get(file);
    if (known) return known;
    const read = /\.md$/i.test(file)
      ? tree.readText(file).then((t) => (t === null ? null : readMkdocsPage(t, config)))
      : Promise.resolve(null);
    pages.set(file, read);
    return read;
  };
  const notInNav = config.notInNav.map((p) => notInNavMatcher(p.trim())).filter((m) => m !== null);
  const index: MkdocsIndex = {
    configFile: found.file,
    config,
    contentDir,
    files: () => {
      files ??= tree.listFiles(contentDir).then((list) => new Set(list));
      return files;
    },
    page,
    notInNav: (file) => {
      const rel = relativeTo(contentDir, file);
      return rel !== null && notInNav.some((m) => m(rel));
    },
    referrers: () => {
      referrers ??= scanLinks(index);
      return referrers;
    },
  };
  return index;
}

/** A gitignore-style `not_in_nav` line as a predicate over paths relative to docs_dir. */
function notInNavMatcher(pattern: string): ((rel: string) => boolean) | null {
  if (pattern === '' || pattern.startsWith('#') || pattern.startsWith('!')) return null;
  let glob = pattern.startsWith('/') ? pattern.slice(1) : `**/${pattern}`;
  if (glob.endsWith('/')) glob += '**';
  try {
    const matches = compileGlob(glob, { dot: true });
    const under = compileGlob(`${glob}/**`, { dot: true });
    return (rel) => matches(rel) || under(rel);
  } catch {
    return null;
  }
}

async function scanLinks(index: MkdocsIndex): Promise<Map<string, Set<string>>> {
  const map = new Map<string, Set<string>>();
  for (const file of await index.files()) {
    const page = await index.page(file);
    for (const link of page?.links ?? []) {
      const target = resolveLink(index, file, link.url);
      if (target.skip || target.file === file) continue;
      map.set(target.file, (map.get(target.file) ?? new Set<string>()).add(file));
    }
  }
  return map;
}
