/**
 * Which generator's configuration one state of the repository has, found the way detectSite
 * finds it (src/agent/site/detect.ts) but read through a DocsTree, so that the base state of a
 * run is judged by its own files. Cached per tree.
 */
import { candidateDirs } from '../site/detect.ts';
import { joinRel, normalizeRel } from '../site/repo-files.ts';
import { findSphinxConf } from '../site/sphinx.ts';
import type { DocsTree } from './types.ts';

export interface SiteConfig {
  kind: 'mintlify' | 'mkdocs' | 'other' | 'sphinx';
  /** Repository-relative path of the config file. */
  file: string;
}

const JS_EXT = ['js', 'mjs', 'cjs', 'ts', 'mts', 'cts'];
const CONFIGS: [SiteConfig['kind'], string[]][] = [
  ['mintlify', ['docs.json', 'mint.json']],
  ['mkdocs', ['mkdocs.yml', 'mkdocs.yaml']],
  ['other', JS_EXT.flatMap((e) => [`docusaurus.config.${e}`, `astro.config.${e}`, `.vitepress/config.${e}`])],
];

const cache = new WeakMap<DocsTree, Map<string, Promise<SiteConfig | null>>>();

/** The site configuration of `tree` for the documentation folder `docsDir`, or null (plain Markdown). */
export function findSiteConfig(tree: DocsTree, docsDir: string): Promise<SiteConfig | null> {
  const docs = normalizeRel(docsDir);
  const byDir = cache.get(tree) ?? new Map<string, Promise<SiteConfig | null>>();
  cache.set(tree, byDir);
  const found = byDir.get(docs) ?? search(tree, docs);
  byDir.set(docs, found);
  return found;
}

async function search(tree: DocsTree, docs: string): Promise<SiteConfig | null> {
  for (const dir of candidateDirs(docs)) {
    for (const [kind, names] of CONFIGS) {
      for (const name of names) {
        const file = joinRel(dir, name);
        if ((await tree.exists(file)) === 'file') return { kind, file };
      }
    }
  }
  const conf = await findSphinxConf((file) => tree.readText(file), docs);
  return conf ? { kind: 'sphinx', file: conf } : null;
}
