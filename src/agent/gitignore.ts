/** The repository's ignore rules (`.gitignore` files and `.git/info/exclude`), as git applies them. */
import { lstatSync, readFileSync } from 'node:fs';
import ignore, { type Ignore } from 'ignore';

export interface IgnoreRules {
  /** Directory of the .gitignore, repository-relative ('' for the root). */
  base: string;
  matcher: Ignore;
}

export function readIgnoreFile(file: string): Ignore | null {
  try {
    if (!lstatSync(file).isFile()) return null;
    return ignore().add(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Git's rule, closely enough: the deepest .gitignore that decides wins. */
export function isIgnored(rules: IgnoreRules[], relative: string, directory: boolean): boolean {
  let ignored = false;
  for (const { base, matcher } of rules) {
    const local = base === '' ? relative : relative.slice(base.length + 1);
    const result = matcher.test(directory ? `${local}/` : local);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}
