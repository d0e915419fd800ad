/**
 * One state of a Mintlify site as the built-in checks read it: docs.json (or mint.json) with its
 * `$ref` files resolved, the navigation's page entries with the file each is written in, the
 * files under the site's folder, and each page parsed once. Built lazily and shared by every
 * check of the same tree (keyed on the DocsTree object), so a check reads only what it needs.
 */
import path from 'node:path';
import { HTTP_METHOD, MINTLIFY_CONTAINERS } from '../site/mintlify.ts';
import { type ResolvedConfig, resolveMintlifyConfig } from '../site/mintlify-refs.ts';
import { joinRel, normalizeRel, relativeTo } from '../site/repo-files.ts';
import { isObject } from '../site/types.ts';
import { pageAnchors } from './mintlify-anchors.ts';
import { type ParsedPage, parsePageCached } from './mintlify-mdx.ts';
import type { DocsTree } from './types.ts';

/** One page entry of the navigation. */
export interface NavEntry {
  /** As written: a page path without extension, relative to the site folder. */
  ref: string;
  /** Repository-relative file the entry is written in: docs.json or a `$ref` file. */
  holder: string;
}

export interface MintlifySite {
  tree: DocsTree;
  /** Repository-relative docs.json or mint.json. */
  configFile: string;
  /** The folder of the config: page paths and absolute links are relative to it. */
  contentDir: string;
  config: ResolvedConfig;
  /** Page entries (OpenAPI operations left out), in navigation order. */
  nav: NavEntry[];
  /** Every file under the site folder, repository-relative. */
  files: Set<string>;
  /** Every folder holding a file, repository-relative. */
  dirs: Set<string>;
  /** Files by folder and name without extension (`guides/setup` → `guides/setup.mdx`, …). */
  stems: Map<string, string[]>;
  /** A file's text, read once per tree; null when it is not a file of the site. */
  text(file: string): Promise<string | null>;
  /** A page's parse, once per tree; null when the file does not exist. */
  page(file: string): Promise<ParsedPage | null>;
  /** A page's anchors, or null when it does not parse or does not exist. */
  anchors(file: string): Promise<Set<string> | null>;
}

const sites = new WeakMap<DocsTree, Map<string, Promise<MintlifySite | null>>>();
/** A page's anchors, kept with its parse (which the head and the base share). */
const anchorsOfParse = new WeakMap<ParsedPage, Set<string>>();

/** The Mintlify site of `docsDir` (or of its nearest ancestor with a docs.json/mint.json), or null. */
export function mintlifySite(tree: DocsTree, docsDir: string): Promise<MintlifySite | null> {
  let byDir = sites.get(tree);
  if (!byDir) {
    byDir = new Map();
    sites.set(tree, byDir);
  }
  const key = normalizeRel(docsDir);
  let site = byDir.get(key);
  if (!site) {
    site = loadSite(tree, key);
    byDir.set(key, site);
  }
  return site;
}

/** Whether a repository-relative file is a page Mintlify reads (`.md`/`.mdx` under the site folder). */
export function isMintlifyPage(site: Pick<MintlifySite, 'contentDir'>, file: string): boolean {
  const rel = relativeTo(site.contentDir, normalizeRel(file));
  return (
    rel !== null &&
    /\.mdx?$/i.test(rel) &&
    !rel.split('/').some((p) => p.startsWith('.') || p === 'node_modules')
  );
}

/** The page file a navigation entry or link path (relative to the site folder) names, or null. */
export function pageFileOf(site: MintlifySite, ref: string): string | null {
  const r = normalizeRel(ref.replace(/^\/+/, ''));
  const at = (rel: string) => (r === '.' ? rel.replace(/^\.\//, '') : rel);
  const candidates = /\.mdx?$/.test(r)
    ? [r]
    : [at(`${r}.mdx`), at(`${r}.md`), at(`${r}/index.mdx`), at(`${r}/index.md`)];
  for (const c of candidates) {
    const file = joinRel(site.contentDir, c);
    if (site.files.has(file)) return file;
  }
  return null;
}

/** How a page is named in the navigation and in absolute links: its path without extension. */
export function refOfPage(site: Pick<MintlifySite, 'contentDir'>, file: string): string {
  return (relativeTo(site.contentDir, normalizeRel(file)) ?? file).replace(/\.mdx?$/i, '');
}

async function findConfig(tree: DocsTree, docsDir: string): Promise<string | null> {
  for (let dir = docsDir; ; dir = path.posix.dirname(dir)) {
    for (const name of ['docs.json', 'mint.json']) {
      const file = joinRel(dir, name);
      if ((await tree.exists(file)) === 'file') return file;
    }
    if (dir === '.' || dir === '/') return null;
  }
}

async function loadSite(tree: DocsTree, docsDir: string): Promise<MintlifySite | null> {
  const configFile = await findConfig(tree, docsDir);
  if (!configFile) return null;
  const contentDir = path.posix.dirname(configFile);
  const config = await resolveMintlifyConfig((file) => tree.readText(file), configFile);
  const listed = await tree.listFiles(contentDir);
  const files = new Set(listed);
  const dirs = new Set<string>();
  const stems = new Map<string, string[]>();
  for (const file of listed) {
    for (let d = path.posix.dirname(file); d !== '.' && !dirs.has(d); d = path.posix.dirname(d)) dirs.add(d);
    const stem = file.replace(/\.[^./]*$/, '');
    const list = stems.get(stem);
    if (list) list.push(file);
    else stems.set(stem, [file]);
  }
  const texts = new Map<string, Promise<string | null>>();
  const text = (file: string) => {
    const rel = normalizeRel(file);
    let read = texts.get(rel);
    if (!read) {
      read = files.has(rel) ? tree.readText(rel) : Promise.resolve(null);
      texts.set(rel, read);
    }
    return read;
  };
  const pages = new Map<string, ParsedPage | null>();
  const page = async (file: string) => {
    const rel = normalizeRel(file);
    if (!pages.has(rel)) {
      const read = await text(rel);
      if (!pages.has(rel)) pages.set(rel, read === null ? null : parsePageCached(read));
    }
    return pages.get(rel)!;
  };
  const anchors = async (file: string) => {
    const parsed = await page(file);
    if (!parsed?.tree) return null;
    let found = anchorsOfParse.get(parsed);
    if (!found) {
      found = pageAnchors(parsed.tree, parsed.customIds);
      anchorsOfParse.set(parsed, found);
    }
    return found;
  };
  const nav = navigationEntries(config, configFile);
  return { tree, configFile, contentDir, config, nav, files, dirs, stems, text, page, anchors };
}

/** The page entries of the resolved navigation, each with the file it is written in. */
export function navigationEntries(config: ResolvedConfig, configFile: string): NavEntry[] {
  const entries: NavEntry[] = [];
  const root = config.value;
  if (!isObject(root)) return entries;
  const add = (ref: string, holder: unknown) => {
    if (HTTP_METHOD.test(ref.trim())) return;
    entries.push({
      ref,
      holder: (isObject(holder) || Array.isArray(holder) ? config.origin.get(holder) : null) ?? configFile,
    });
  };
  const walk = (value: unknown, holder: unknown): void => {
    if (typeof value === 'string') add(value, holder);
    else if (Array.isArray(value)) for (const item of value) walk(item, value);
    else if (isObject(value)) {
      if (typeof value.root === 'string') add(value.root, value);
      for (const key of MINTLIFY_CONTAINERS) if (key in value) walk(value[key], value);
    }
  };
  walk(root.navigation, root);
  return entries;
}
