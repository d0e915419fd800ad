// A git repository made of a list of trees, one commit each, for tests that need a history.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A git repository at `dir` with one commit per tree (and message); returns the commits. */
export function repository(
  dir: string,
  trees: { files: Record<string, string>; message?: string }[],
): string[] {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir,
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '-b', 'main');
  return trees.map(({ files, message }, i) => {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), content);
    }
    git('add', '-A');
    git('commit', '-q', '--allow-empty', '-m', message ?? `commit ${i}`);
    return git('rev-parse', 'HEAD');
  });
}
