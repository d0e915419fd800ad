/**
 * A Sphinx project as its files say it, without running it: the source folder (where conf.py
 * is), the documents (docnames, Sphinx's names without suffix relative to the source folder),
 * each document's markup, and the navigation (the toctrees from the root document down). The
 * site map and verification both read a project through this module, from a checkout or from
 * the base state of a run.
 */
import path from 'node:path';
import { RE2JS } from 're2js';
import { joinRel, relativeTo } from './repo-files.ts';
import { readSphinxConf, type SphinxConf } from './sphinx-conf.ts';
import {
  emptyDocument,
  readRst,
  type SphinxDocument,
  type Toctree,
  type ToctreeEntry,
} from './sphinx-markup.ts';
import { readMyst } from './sphinx-myst.ts';
import type { NavNode } from './types.ts';

/** What a project is read through: a checkout, or one state of a run (a DocsTree). */
export interface SphinxFiles {
  readText(file: string): Promise<string | null>;
  listFiles(dir?: string): Promise<string[]>;
}

export interface SphinxProject {
  /** Repository-relative path of conf.py. */
  confFile: string;
  /** The source folder: conf.py's folder, repository-relative. */
  sourceDir: string;
  conf: SphinxConf;
  /** docname → repository-relative file, in sorted order. */
  docs: Map<string, string>;
  /** Whether a path relative to the source folder is excluded by `exclude_patterns`. */
  excluded(rel: string): boolean;
}

/** Reads conf.py and lists the documents; null when conf.py cannot be read. */
export async function loadSphinxProject(files: SphinxFiles, confFile: string): Promise<SphinxProject | null> {
  const text = await files.readText(confFile);
  if (text === null) return null;
  const conf = readSphinxConf(text);
  const sourceDir = path.posix.dirname(confFile);
  const excluded = excludeMatcher(conf.excludePatterns);
  const docs = new Map<string, string>();
  for (const file of await files.listFiles(sourceDir)) {
    const rel = relativeTo(sourceDir, file);
    if (rel === null || excluded(rel)) continue;
    const suffix = conf.sourceSuffixes.find((s) => rel.endsWith(s));
    if (suffix) docs.set(rel.slice(0, -suffix.length), file);
  }
  return { confFile, sourceDir, conf, docs, excluded };
}

/** The repository-relative file a docname would have with the first source suffix. */
export function fileForDocname(project: SphinxProject, docname: string): string {
  return joinRel(project.sourceDir, `${docname}${project.conf.sourceSuffixes[0] ?? '.rst'}`);
}

/** Reads one document's markup by its suffix. */
export function readDocument(file: string, text: string): SphinxDocument {
  return file.endsWith('.md') ? readMyst(text) : file.endsWith('.ipynb') ? emptyDocument() : readRst(text);
}

/**
 * The repository-relative file a directive's path names (`include`, `image`…): relative to the
 * file, or `/`-absolute from the source folder; null for URLs and docutils' `<standard>` files.
 */
export function directivePath(sourceDir: string, file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || /^<.*>$/.test(target)) return null;
  return target.startsWith('/')
    ? joinRel(sourceDir, target.slice(1))
    : joinRel(path.posix.dirname(file), target);
}

/** Sphinx's docname_join: `name` relative to the document `base` (`/name` from the source folder). */
export function docnameJoin(base: string, name: string): string {
  const joined = path.posix.resolve(`/${base}`, '..', name);
  return joined.replace(/^\/+/, '');
}

/** A toctree entry's docname: suffix dropped as Sphinx does, joined to the document's. */
export function entryDocname(project: SphinxProject, from: string, entry: ToctreeEntry): string {
  let target = entry.target;
  const suffix = project.conf.sourceSuffixes.find((s) => target.endsWith(s));
  if (suffix) target = target.slice(0, -suffix.length);
  return docnameJoin(from, target);
}

/** The docnames a glob entry names: Sphinx's patterns (`*` within a folder, `**` across). */
export function globDocnames(project: SphinxProject, from: string, entry: ToctreeEntry): string[] {
  const matches = patternMatcher([docnameJoin(from, entry.target)]);
  return [...project.docs.keys()].filter((d) => d !== from && matches(d)).sort();
}

/** The documents a toctree names, in order: [entry, docname or null for self/URLs]. */
export function toctreeTargets(
  project: SphinxProject,
  from: string,
  toctree: Toctree,
): { entry: ToctreeEntry; docname: string | null }[] {
  const out: { entry: ToctreeEntry; docname: string | null }[] = [];
  // A glob leaves out what the toctree already named, as Sphinx does.
  const listed = new Set<string>();
  const add = (entry: ToctreeEntry, docname: string | null) => {
    out.push({ entry, docname });
    if (docname !== null) listed.add(docname);
  };
  for (const entry of toctree.entries) {
    if (entry.url || entry.target === 'self') add(entry, null);
    else if (entry.glob) {
      for (const d of globDocnames(project, from, entry)) if (!listed.has(d)) add(entry, d);
    } else add(entry, entryDocname(project, from, entry));
  }
  return out;
}

/**
 * The navigation: the root document's toctrees and, under each document that has toctrees of its
 * own, a section holding it and its entries; captions become sections. Each document is expanded
 * once, so cycles end.
 */
export async function sphinxNavigation(
  project: SphinxProject,
  documentOf: (docname: string) => Promise<SphinxDocument | null>,
): Promise<NavNode[]> {
  const expanded = new Set<string>();
  const expand = async (docname: string): Promise<NavNode[]> => {
    expanded.add(docname);
    const doc = await documentOf(docname);
    const nodes: NavNode[] = [];
    for (const toctree of doc?.toctrees ?? []) {
      const children: NavNode[] = [];
      for (const { docname: target } of toctreeTargets(project, docname, toctree)) {
        if (target !== null) children.push(...(await pageNode(target)));
      }
      if (toctree.caption) nodes.push({ type: 'section', label: toctree.caption, children });
      else nodes.push(...children);
    }
    return nodes;
  };
  const pageNode = async (docname: string): Promise<NavNode[]> => {
    const file = project.docs.get(docname) ?? null;
    const page: NavNode = { type: 'page', ref: docname, file };
    if (file === null || expanded.has(docname)) return [page];
    const children = await expand(docname);
    if (children.length === 0) return [page];
    const title = (await documentOf(docname))?.title;
    return [
      { type: 'section', label: title ? `${title} (${docname})` : docname, children: [page, ...children] },
    ];
  };
  const root = project.conf.rootDoc;
  if (!project.docs.has(root)) return [{ type: 'page', ref: root, file: null }];
  return [{ type: 'page', ref: root, file: project.docs.get(root)! }, ...(await expand(root))];
}

/** Sphinx's exclude_patterns: a path is excluded when it or a folder above it matches. */
function excludeMatcher(patterns: string[]): (rel: string) => boolean {
  const expanded = [...patterns, ...patterns.filter((p) => p.startsWith('**/')).map((p) => p.slice(3))];
  const matches = patternMatcher(expanded);
  return (rel) => {
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) if (matches(parts.slice(0, i).join('/'))) return true;
    return false;
  };
}

/** Sphinx's glob translation (sphinx.util.matching), run by RE2 so that no pattern backtracks. */
export function patternMatcher(patterns: string[]): (name: string) => boolean {
  const sources = patterns.map(translatePattern).filter((s) => s !== null);
  if (sources.length === 0) return () => false;
  const re = RE2JS.compile(sources.map((s) => `(?:${s})`).join('|'));
  return (name) => re.testExact(name);
}

function translatePattern(pattern: string): string | null {
  if (pattern.length > 1_000) return null;
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        out += '.*';
        i++;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) out += '\\[';
      else {
        let inner = pattern.slice(i + 1, close).replace(/\\/g, '\\\\');
        if (inner.startsWith('!')) inner = `^/${inner.slice(1)}`;
        out += `[${inner}]`;
        i = close;
      }
    } else out += c.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
  }
  return out;
}
