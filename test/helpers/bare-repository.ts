import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporaryDirectory } from './temp.ts';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], { cwd, stdio: 'pipe' });

/**
 * A bare repository whose HEAD names `main`, with only the branch `trunk` pushed to it: what
 * `git init --bare` and a first push of another branch leave (issue 35). Removed with the test's
 * temporary directories.
 */
export function bareWithMissingHead(): string {
  const root = temporaryDirectory('docwright-bare-head-');
  const bare = path.join(root, 'docs.git');
  const work = path.join(root, 'work');
  execFileSync('git', ['init', '-q', '--bare', '--initial-branch=main', bare]);
  execFileSync('git', ['init', '-q', '--initial-branch=trunk', work]);
  writeFileSync(path.join(work, 'index.mdx'), '# Docs\n');
  git(work, 'add', '.');
  git(work, 'commit', '-qm', 'init');
  git(work, 'push', '-q', bare, 'trunk');
  return bare;
}
