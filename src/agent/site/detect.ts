/**
 * Docs-site awareness: which generator a repository uses (Mintlify, MkDocs, Sphinx, Docusaurus,
 * VitePress, Astro Starlight, or plain Markdown), its config, navigation and pages. Everything
 * here only reads; it never follows a symbolic link and never evaluates a JavaScript config.
 */
import path from 'node:path';
import { mintlify } from './mintlify.ts';
import { mkdocs } from './mkdocs.ts';
import { withPages } from './pages.ts';
import { joinRel, normalizeRel, readRepoFile, safeStat } from './repo-files.ts';
import { findSphinxConf, sphinx } from './sphinx.ts';
import type { SiteInfo, SiteKind } from './types.ts';

interface Found {
  kind: Exclude<SiteKind, 'markdown' | 'sphinx'>;
  configFile: string;
  dir: string;
}

const JS_EXT = ['js', 'mjs', 'cjs', 'ts', 'mts', 'cts'];

async function findConfigIn(root: string, dir: string): Promise<Found | null> {
  const at = (name: string) => joinRel(dir, name);
  for (const name of ['docs.json', 'mint.json']) {
    if ((await safeStat(root, at(name))) === 'file') return { kind: 'mintlify', configFile: at(name), dir };
  }
  for (const name of ['mkdocs.yml', 'mkdocs.yaml']) {
    if ((await safeStat(root, at(name))) === 'file') return { kind: 'mkdocs', configFile: at(name), dir };
  }
  for (const ext of JS_EXT) {
    const file = at(`docusaurus.config.${ext}`);
    if ((await safeStat(root, file)) === 'file') return { kind: 'docusaurus', configFile: file, dir };
  }
  for (const ext of JS_EXT) {
    const file = at(`astro.config.${ext}`);
    if ((await safeStat(root, file)) !== 'file') continue;
    const text = (await readRepoFile(root, file, 256 * 1024))?.text ?? '';
    const pkg = (await readRepoFile(root, at('package.json'), 256 * 1024))?.text ?? '';
    if (text.includes('starlight') || pkg.includes('@astrojs/starlight')) {
      return { kind: 'starlight', configFile: file, dir };
    }
  }
  for (const ext of JS_EXT) {
    const file = at(`.vitepress/config.${ext}`);
    if ((await safeStat(root, file)) === 'file') return { kind: 'vitepress', configFile: file, dir };
  }
  return null;
}

/** The docs directory, its ancestors up to the root, then a few usual subdirectories. */
export function candidateDirs(docsDir: string): string[] {
  const dirs: string[] = [];
  for (let d = docsDir; ; d = path.posix.dirname(d)) {
    dirs.push(d);
    if (d === '.' || d === '/') break;
  }
  for (const sub of ['docs', 'website', 'documentation']) dirs.push(joinRel(docsDir, sub));
  return dirs;
}

/**
 * The folders a run whose documentation lives in `docsDir` needs checked out, for a sparse
 * checkout in git's cone mode (which also checks out the files directly in the root and in every
 * ancestor of these folders: docs.json, mint.json, mkdocs.yml, docusaurus.config.js, package.json,
 * AGENTS.md…). Besides `docsDir`: the folders of configs that live in a subfolder of an ancestor
 * (`.vitepress/`) and the repository's `.mintlify/` guidance. Undefined when the documentation is
 * the whole repository.
 */
export function siteCheckoutFolders(docsDir: string): string[] | undefined {
  const docs = normalizeRel(docsDir);
  if (docs === '.') return undefined;
  const ancestors = candidateDirs(docs).filter((d) => d !== docs && !d.startsWith(`${docs}/`));
  return [docs, '.mintlify', ...ancestors.map((d) => joinRel(d, '.vitepress'))];
}

/**
 * Detects the docs site of a checkout: its generator, config file, navigation
 * (Mintlify docs.json/mint.json and MkDocs nav, resolved to files) and pages.
 */
export async function detectSite(root: string, docsDir: string): Promise<SiteInfo> {
  const docs = normalizeRel(docsDir);
  let found: Found | null = null;
  for (const dir of candidateDirs(docs)) {
    found = await findConfigIn(root, dir);
    if (found) break;
  }
  const base: SiteInfo = {
    kind: 'markdown',
    root,
    docsDir: docs,
    configFile: null,
    contentDir: docs,
    navigation: null,
    navPages: [],
    missing: [],
    pages: [],
    pagesTruncated: false,
    configError: null,
    notes: [],
  };
  if (!found) {
    // Sphinx's conf.py is looked for last: a Python file named conf.py is a weaker sign than the others' configs.
    const conf = await findSphinxConf(
      async (file) => (await readRepoFile(root, file, 256 * 1024))?.text ?? null,
      docs,
    );
    if (conf) return sphinx({ ...base, kind: 'sphinx', configFile: conf });
    base.notes.push('No docs-site generator detected: plain Markdown.');
    return withPages(base);
  }
  base.kind = found.kind;
  base.configFile = found.configFile;
  base.contentDir = found.dir;
  switch (found.kind) {
    case 'mintlify':
      return mintlify(base);
    case 'mkdocs':
      return mkdocs(base);
    case 'docusaurus': {
      const docsSub = joinRel(found.dir, 'docs');
      if ((await safeStat(root, docsSub)) === 'dir') base.contentDir = docsSub;
      const sidebars = await firstExisting(
        root,
        [...JS_EXT, 'json'].map((e) => joinRel(found.dir, `sidebars.${e}`)),
      );
      base.notes.push(
        `Navigation is defined in ${sidebars ?? 'the sidebars file named by the config'} (JavaScript, not evaluated here): read it before adding, moving or removing pages. Autogenerated sidebars follow the folder structure (_category_.json).`,
      );
      return withPages(base);
    }
    case 'vitepress':
      base.notes.push(
        `Navigation (themeConfig.sidebar/nav) is defined in ${found.configFile} (JavaScript, not evaluated here): read it before adding, moving or removing pages; links are "/path/without-extension".`,
      );
      return withPages(base);
    case 'starlight': {
      base.contentDir = joinRel(found.dir, 'src/content/docs');
      base.notes.push(
        `Navigation (the starlight() sidebar) is defined in ${found.configFile} (JavaScript, not evaluated here): read it before adding, moving or removing pages. Autogenerated groups follow folders under ${base.contentDir}; explicit entries use slugs (path without extension).`,
      );
      return withPages(base);
    }
  }
}

async function firstExisting(root: string, files: string[]): Promise<string | null> {
  for (const f of files) if ((await safeStat(root, f)) === 'file') return f;
  return null;
}
