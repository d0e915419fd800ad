import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkoutTree, overlayTree } from '../../../src/agent/verify/tree.ts';
import type { CheckInput, RunChanges } from '../../../src/agent/verify/types.ts';
import { temporaryDirectory } from '../../helpers/temp.ts';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], {
    cwd: dir,
    stdio: 'pipe',
  });

/** A repository with `base` committed, then `head` written over it (uncommitted, as a run leaves it). */
export async function repository(base: Record<string, string>, head: Record<string, string | null>) {
  const root = realpathSync(temporaryDirectory('docwright-verify-'));
  const write = async (files: Record<string, string | null>) => {
    for (const [file, text] of Object.entries(files)) {
      const full = path.join(root, file);
      if (text === null) await rm(full, { force: true });
      else {
        await mkdir(path.dirname(full), { recursive: true });
        await writeFile(full, text);
      }
    }
  };
  await write(base);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'base');
  await write(head);
  const changes: RunChanges = {
    changed: Object.entries(head)
      .filter(([, t]) => t !== null)
      .map(([f]) => f),
    deleted: Object.entries(head)
      .filter(([, t]) => t === null)
      .map(([f]) => f),
    moved: [],
  };
  const originals = new Map(Object.keys(head).map((f) => [f, base[f] ?? null]));
  const headTree = checkoutTree(root);
  const baseTree = overlayTree(headTree, originals);
  const input = (state: 'head' | 'base'): CheckInput => ({
    tree: state === 'head' ? headTree : baseTree,
    other: state === 'head' ? baseTree : headTree,
    state,
    docsDir: 'docs',
    changes,
    signal: new AbortController().signal,
  });
  return { root, input };
}
