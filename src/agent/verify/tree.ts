/**
 * The two states of the docs tree that verification reads: the checkout as it is, and the base —
 * the same checkout seen through the originals of the files the run changed, so that the base is
 * read without git and without a second copy of the repository.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { normalizeRel, safeStat } from '../site/repo-files.ts';
import { walkFiles } from '../walk.ts';
import type { DocsTree } from './types.ts';

/** Files listed at most by one walk: far past any docs site, short of a runaway monorepo. */
const MAX_LISTED_FILES = 200_000;

/** The checkout at `root` (its real path) as it is now. */
export function checkoutTree(root: string): DocsTree {
  return {
    dir: root,
    async readText(file) {
      if ((await safeStat(root, file)) !== 'file') return null;
      return readFile(path.join(root, normalizeRel(file)), 'utf8').catch(() => null);
    },
    exists: (file) => safeStat(root, file),
    async listFiles(dir = '.') {
      if ((await safeStat(root, dir)) !== 'dir') return [];
      return walkFiles(root, normalizeRel(dir), { maxFiles: MAX_LISTED_FILES }).files;
    },
  };
}

/**
 * `head` with the run's changes undone: `originals` maps each repository-relative path the run
 * touched to its text before the run, or null when the run created it.
 */
export function overlayTree(head: DocsTree, originals: ReadonlyMap<string, string | null>): DocsTree {
  const original = (file: string) => originals.get(normalizeRel(file));
  const touched = (file: string) => originals.has(normalizeRel(file));
  return {
    dir: null,
    async readText(file) {
      return touched(file) ? (original(file) ?? null) : head.readText(file);
    },
    async exists(file) {
      const rel = normalizeRel(file);
      if (touched(rel)) return original(rel) === null ? null : 'file';
      const found = await head.exists(rel);
      if (found !== null) return found;
      // A directory the run emptied still exists in the base.
      for (const [p, text] of originals) if (text !== null && p.startsWith(`${rel}/`)) return 'dir';
      return null;
    },
    async listFiles(dir = '.') {
      const rel = normalizeRel(dir);
      const inside = (p: string) => rel === '.' || p.startsWith(`${rel}/`);
      const files = new Set((await head.listFiles(rel)).filter((f) => !touched(f)));
      for (const [p, text] of originals) if (text !== null && inside(p)) files.add(p);
      return [...files].sort();
    },
  };
}
