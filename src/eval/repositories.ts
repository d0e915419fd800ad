/**
 * The temporary git repositories a task runs on: the docs repository (the project's, on the
 * `local` host, so that the job pushes its branch back into it) and the code repository of a
 * code change (a base commit and a head commit).
 */
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { git } from '../git/git.ts';
import { DatasetRepository } from './dataset-repository.ts';
import type { Tree } from './task.ts';

const IDENTITY = [
  '-c',
  'user.name=docwright eval',
  '-c',
  'user.email=eval@docwright.invalid',
  '-c',
  'commit.gpgsign=false',
];

/** Writes the files of `tree` into `target` (which exists); a `.git` in a folder is left out. */
async function writeTree(tree: Tree, target: string, signal?: AbortSignal): Promise<void> {
  if (tree.kind === 'folders') {
    for (const dir of tree.dirs) {
      await cp(dir, target, {
        recursive: true,
        force: true,
        filter: (source) => path.basename(source) !== '.git',
      });
    }
    for (const patch of tree.patches ?? []) await git(['apply', '--', patch], { cwd: target, signal });
    return;
  }
  // A commit of a dataset's clone, read without trusting the clone (dataset-repository.ts).
  const dataset = await DatasetRepository.open(
    tree.repository,
    path.join(path.dirname(target), '.datasets'),
    signal,
  );
  try {
    await dataset.writeTree(tree.commit, target, tree.from, signal);
  } finally {
    await rm(dataset.dir, { recursive: true, force: true });
  }
}

/** Removes everything in `dir` but its `.git`. */
async function clearWorkTree(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (name !== '.git') await rm(path.join(dir, name), { recursive: true, force: true });
  }
}

async function commitAll(dir: string, message: string, signal?: AbortSignal): Promise<string> {
  await git(['add', '--all'], { cwd: dir, signal });
  await git([...IDENTITY, 'commit', '--quiet', '--allow-empty', '--no-verify', '-F', '-'], {
    cwd: dir,
    input: message,
    signal,
  });
  return (await git(['rev-parse', 'HEAD'], { cwd: dir, signal })).trim();
}

/** A repository at `dir` whose `main` holds `tree` in one commit; returns the commit. */
export async function createRepository(
  dir: string,
  tree: Tree,
  message: string,
  signal?: AbortSignal,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  await git(['init', '--quiet', '--initial-branch=main'], { cwd: dir, signal });
  await writeTree(tree, dir, signal);
  return commitAll(dir, message, signal);
}

export interface CodeChange {
  dir: string;
  base: string;
  head: string;
}

/** The code repository of a task's code change: `base` committed, then `head` on top of it. */
export async function createCodeRepository(
  dir: string,
  code: { base: Tree; head: Tree },
  /** The head commit's message: the change's title and description. */
  message: string,
  signal?: AbortSignal,
): Promise<CodeChange> {
  const base = await createRepository(dir, code.base, 'Base', signal);
  await clearWorkTree(dir);
  await writeTree(code.head, dir, signal);
  const head = await commitAll(dir, message, signal);
  return { dir, base, head };
}
