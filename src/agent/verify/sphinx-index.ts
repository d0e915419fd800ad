/**
 * One state of a Sphinx site as verification reads it: the project (conf.py, documents), each
 * document's markup on demand, and the site-wide indexes (which toctrees name a document, which
 * labels exist, which documents name another) built once, lazily, per tree and shared by the
 * checks, so that a one-page change reads the other pages at most once.
 */
import { relativeTo } from '../site/repo-files.ts';
import { normalizeLabel, type SphinxDocument } from '../site/sphinx-markup.ts';
import {
  directivePath,
  docnameJoin,
  loadSphinxProject,
  readDocument,
  type SphinxProject,
  toctreeTargets,
} from '../site/sphinx-project.ts';
import { findSiteConfig } from './site-config.ts';
import type { DocsTree, RunChanges } from './types.ts';

/** Labels every Sphinx site has. */
const STANDARD_LABELS = ['genindex', 'modindex', 'py-modindex', 'search'];

export interface SphinxIndex {
  project: SphinxProject;
  /** The markup of a document, or null when it has no readable file. */
  document(docname: string): Promise<SphinxDocument | null>;
  /** The docname of a repository-relative file, or null when it is no document of the site. */
  docnameOf(file: string): string | null;
  /** docname → the documents whose toctrees name it. */
  includers(): Promise<Map<string, Set<string>>>;
  /** Every `:ref:` label of the site, normalised. */
  labels(): Promise<Set<string>>;
  /** docname → the documents whose toctrees or `:doc:` roles name it (existing or not). */
  referrers(): Promise<Map<string, Set<string>>>;
}

const cache = new WeakMap<DocsTree, Map<string, Promise<SphinxIndex | null>>>();

/** The Sphinx site of `tree`, or null when its generator is another (or none). */
export function sphinxIndex(tree: DocsTree, docsDir: string): Promise<SphinxIndex | null> {
  const byDir = cache.get(tree) ?? new Map<string, Promise<SphinxIndex | null>>();
  cache.set(tree, byDir);
  const index = byDir.get(docsDir) ?? build(tree, docsDir);
  byDir.set(docsDir, index);
  return index;
}

async function build(tree: DocsTree, docsDir: string): Promise<SphinxIndex | null> {
  const config = await findSiteConfig(tree, docsDir);
  if (config?.kind !== 'sphinx') return null;
  const project = await loadSphinxProject(
    { readText: (f) => tree.readText(f), listFiles: (d) => tree.listFiles(d) },
    config.file,
  );
  if (!project) return null;
  const documents = new Map<string, Promise<SphinxDocument | null>>();
  const document = (docname: string) => {
    let doc = documents.get(docname);
    if (!doc) {
      const file = project.docs.get(docname);
      doc = file
        ? tree.readText(file).then((text) => (text === null ? null : readDocument(file, text)))
        : Promise.resolve(null);
      documents.set(docname, doc);
    }
    return doc;
  };
  const docnameOf = (file: string) => {
    const rel = relativeTo(project.sourceDir, file);
    const suffix = rel === null ? undefined : project.conf.sourceSuffixes.find((s) => rel.endsWith(s));
    if (rel === null || suffix === undefined) return null;
    const docname = rel.slice(0, -suffix.length);
    return project.docs.get(docname) === file ? docname : null;
  };
  let scan: Promise<Scan> | null = null;
  const scanned = () => (scan ??= scanSite(tree, project, document));
  return {
    project,
    document,
    docnameOf,
    includers: async () => (await scanned()).includers,
    labels: async () => (await scanned()).labels,
    referrers: async () => (await scanned()).referrers,
  };
}

interface Scan {
  includers: Map<string, Set<string>>;
  labels: Set<string>;
  referrers: Map<string, Set<string>>;
}

/** Files included into documents (`.. include::`) whose labels are read, in all. */
const MAX_INCLUDED_FILES = 2_000;

/** Reads every document once for the site-wide indexes. */
async function scanSite(
  tree: DocsTree,
  project: SphinxProject,
  document: (docname: string) => Promise<SphinxDocument | null>,
): Promise<Scan> {
  const scan: Scan = { includers: new Map(), labels: new Set(STANDARD_LABELS), referrers: new Map() };
  const add = (map: Map<string, Set<string>>, key: string, from: string) => {
    const set = map.get(key) ?? new Set<string>();
    map.set(key, set.add(from));
  };
  const included = new Map<string, Promise<SphinxDocument | null>>();
  /** Labels and sections of a document and of the files it includes, recursively. */
  const addLabels = async (docname: string, file: string, doc: SphinxDocument, depth: number) => {
    for (const label of doc.labels) scan.labels.add(label);
    for (const title of project.conf.autosectionlabel ? doc.sections : []) {
      const label = normalizeLabel(title);
      const { autosectionlabelPrefixDocument: prefix, extensionsKnown } = project.conf;
      if (prefix || !extensionsKnown) scan.labels.add(`${docname}:${label}`);
      if (!prefix || !extensionsKnown) scan.labels.add(label);
    }
    for (const ref of depth < 5 ? doc.references : []) {
      const target = ref.kind === 'include' ? directivePath(project.sourceDir, file, ref.target) : null;
      if (target === null || (!included.has(target) && included.size >= MAX_INCLUDED_FILES)) continue;
      const known = included.get(target);
      const read =
        known ?? tree.readText(target).then((text) => (text === null ? null : readDocument(target, text)));
      included.set(target, read);
      const part = known ? null : await read;
      if (part) await addLabels(docname, target, part, depth + 1);
    }
  };
  for (const [docname, file] of project.docs) {
    const doc = await document(docname);
    if (!doc) continue;
    await addLabels(docname, file, doc, 0);
    for (const toctree of doc.toctrees) {
      for (const { entry, docname: target } of toctreeTargets(project, docname, toctree)) {
        if (target === null) continue;
        add(scan.includers, target, docname);
        if (!entry.glob) add(scan.referrers, target, docname);
      }
    }
    for (const ref of doc.references) {
      if (ref.kind === 'doc') add(scan.referrers, docnameJoin(docname, ref.target), docname);
    }
  }
  return scan;
}

/**
 * The documents to check: those the run changed that exist in this tree, and those that name a
 * document the run moved or deleted (in this tree's own indexes).
 */
export async function sphinxScope(
  index: SphinxIndex,
  changes: RunChanges,
): Promise<{ changed: string[]; referring: string[] }> {
  const changed = [...new Set(changes.changed.map(index.docnameOf).filter((d) => d !== null))].sort();
  const gone = new Set<string>();
  for (const file of [...changes.deleted, ...changes.moved.map((m) => m.from)]) {
    const rel = relativeTo(index.project.sourceDir, file);
    const suffix = rel === null ? undefined : index.project.conf.sourceSuffixes.find((s) => rel.endsWith(s));
    if (rel !== null && suffix !== undefined) gone.add(rel.slice(0, -suffix.length));
  }
  const referring = new Set<string>();
  if (gone.size > 0) {
    const referrers = await index.referrers();
    for (const docname of gone) for (const from of referrers.get(docname) ?? []) referring.add(from);
  }
  for (const d of changed) referring.delete(d);
  return { changed, referring: [...referring].filter((d) => index.project.docs.has(d)).sort() };
}
