/**
 * The one file walker of the agent: every file under a directory of the repository, sorted,
 * skipping `.git`, `.github`, `node_modules`, symbolic links and what the repository's
 * `.gitignore` files (and `.git/info/exclude`) ignore — as git would list them. The tools list
 * and search with it, suggestions pick from it, and the site's pages are found with it.
 */
import { type Dirent, readdirSync } from 'node:fs';
import path from 'node:path';
import { checkDeadline } from './deadline.ts';
import { type IgnoreRules, isIgnored, readIgnoreFile } from './gitignore.ts';
import { compareStrings, FORBIDDEN_SEGMENTS } from './paths.ts';

export interface WalkResult {
  /** Repository-relative file paths, sorted. */
  files: string[];
  /** True when the walk stopped at `maxFiles`. */
  truncated: boolean;
}

/** Directory names never listed or searched (besides what .gitignore says). */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

/**
 * The files under `dir` (repository-relative, an existing directory reached without a symbolic
 * link: the caller checks) of the repository at `root` (its real path), at most `maxFiles`.
 * `deadline` stops a walk of a huge tree with a ToolError the model can act on.
 */
export function walkFiles(
  root: string,
  dir: string,
  options: { maxFiles: number; deadline?: number | undefined },
): WalkResult {
  const { deadline, maxFiles } = options;
  const files: string[] = [];
  let truncated = false;
  // The ignore rules of the ancestors of `dir`, root first.
  const rules: IgnoreRules[] = [];
  const exclude = readIgnoreFile(path.join(root, '.git', 'info', 'exclude'));
  if (exclude) rules.push({ base: '', matcher: exclude });
  const segments = dir === '.' ? [] : dir.split('/');
  for (let i = 0; i < segments.length; i++) {
    const base = segments.slice(0, i).join('/');
    const matcher = readIgnoreFile(path.join(root, base, '.gitignore'));
    if (matcher) rules.push({ base, matcher });
    if (isIgnored(rules, segments.slice(0, i + 1).join('/'), true)) return { files, truncated };
  }
  const visit = (abs: string, rel: string, inherited: IgnoreRules[]): void => {
    checkDeadline(deadline);
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    let active = inherited;
    if (entries.some((e) => e.name === '.gitignore' && e.isFile())) {
      const matcher = readIgnoreFile(path.join(abs, '.gitignore'));
      if (matcher) active = [...inherited, { base: rel === '.' ? '' : rel, matcher }];
    }
    for (const entry of entries) {
      if (truncated) return;
      const childRel = rel === '.' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (SKIPPED_DIRECTORIES.has(entry.name) || FORBIDDEN_SEGMENTS.has(entry.name.toLowerCase())) continue;
        if (isIgnored(active, childRel, true)) continue;
        visit(path.join(abs, entry.name), childRel, active);
      } else if (entry.isFile()) {
        // A linked worktree's `.git` is a file naming its git directory: no more the agent's than the folder.
        if (FORBIDDEN_SEGMENTS.has(entry.name.toLowerCase())) continue;
        if (isIgnored(active, childRel, false)) continue;
        if (files.length >= maxFiles) {
          truncated = true;
          return;
        }
        files.push(childRel);
      }
    }
  };
  visit(dir === '.' ? root : path.join(root, ...segments), dir, rules);
  files.sort(compareStrings);
  return { files, truncated };
}
