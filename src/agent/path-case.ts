/**
 * A path given in the wrong case ("Docs/Quickstart.mdx" for "docs/quickstart.mdx"), or in the
 * other Unicode normalisation form: the repository's own spelling, found by reading directories
 * without following a link and without entering .git or .github. What is found still goes
 * through the workspace's guard (src/agent/workspace.ts) like any path.
 */
import { type Dirent, lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { FORBIDDEN_SEGMENTS } from './paths.ts';
import { isCode } from './safe-files.ts';

/** Spellings followed at most (several folders may differ only in case). */
const MAX_SPELLINGS = 10;

const fold = (name: string) => name.normalize('NFC').toLowerCase();

/**
 * `relative` itself when it names an entry (or nothing can be said); otherwise the files that
 * match it ignoring case and Unicode form: one is the file meant, several are for the model to
 * choose from, none means there is no such file.
 */
export function spellingsOf(root: string, relative: string): { exact: true } | { files: string[] } {
  if (relative === '.' || exists(path.join(root, relative))) return { exact: true };
  let frontier = [{ absolute: root, relative: '' }];
  const segments = relative.split('/');
  for (const [i, segment] of segments.entries()) {
    const wanted = fold(segment);
    const last = i === segments.length - 1;
    const next: typeof frontier = [];
    for (const dir of frontier) {
      for (const entry of entries(dir.absolute)) {
        if (fold(entry.name) !== wanted || FORBIDDEN_SEGMENTS.has(entry.name.toLowerCase())) continue;
        if (entry.isSymbolicLink() || !(last ? entry.isFile() : entry.isDirectory())) continue;
        next.push({
          absolute: path.join(dir.absolute, entry.name),
          relative: dir.relative === '' ? entry.name : `${dir.relative}/${entry.name}`,
        });
      }
    }
    frontier = next.slice(0, MAX_SPELLINGS);
  }
  return { files: frontier.map((f) => f.relative) };
}

function exists(absolute: string): boolean {
  try {
    lstatSync(absolute);
    return true;
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return false;
    throw error;
  }
}

function entries(absolute: string): Dirent[] {
  try {
    return readdirSync(absolute, { withFileTypes: true });
  } catch {
    return [];
  }
}
