/** A run's commit: exactly the files the agent changed, with the message of docs/git.mdx. */
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Checkout, RUN_TRAILER } from './checkout.ts';
import { type GitOptions, git } from './git.ts';

export interface CommitOptions {
  /** Repository-relative paths to stage (the agent's checked set); nothing else is committed. */
  files: string[];
  message: string;
  author: { name: string; email: string };
  signal?: AbortSignal;
}

/**
 * Commits exactly `files` (added, changed or deleted); returns false when they hold no change.
 *
 * The commit is built in a separate index read from HEAD's tree. The checkout's own index was
 * written in the same second as every file of the clone, so git cannot trust its timestamps and
 * re-reads every file whenever it writes that index (`git add`, `git commit`): seconds on a large
 * site. An index read from a tree holds no timestamps, so only the staged files are read. A
 * sparse checkout commits in its own index instead: it holds only the checked-out folders (the
 * rest as one entry per folder), where a full one would list every file of the repository.
 */
export async function commitFiles(checkout: Checkout, options: CommitOptions): Promise<boolean> {
  if (options.files.length === 0) return false;
  const opts: GitOptions = {
    cwd: checkout.dir,
    signal: options.signal,
    redact: checkout.context?.redact,
  };
  // A sparse checkout's own index is small (a sparse index) and holds only its folders' files.
  const index = checkout.sparse ? undefined : path.join(checkout.gitDir, 'docwright-index');
  const staging: GitOptions = index ? { ...opts, env: { GIT_INDEX_FILE: index } } : opts;
  if (index) await git(['read-tree', 'HEAD'], staging);
  // Paths on stdin, NUL-separated: taken literally, never as options or pathspec magic.
  await git(['update-index', '--add', '--remove', '-z', '--stdin'], {
    ...staging,
    input: `${options.files.join('\0')}\0`,
  });
  // A partial checkout lacks the blobs outside its folders: git must not fetch them all to check.
  const tree = (await git(['write-tree', '--missing-ok'], staging)).trim();
  const head = checkout.head.commit;
  if (tree === checkout.head.tree) {
    if (index) await rm(index, { force: true });
    return false;
  }
  const identity = {
    GIT_AUTHOR_NAME: options.author.name,
    GIT_AUTHOR_EMAIL: options.author.email,
    GIT_COMMITTER_NAME: options.author.name,
    GIT_COMMITTER_EMAIL: options.author.email,
  };
  const commit = (
    await git(['commit-tree', tree, '-p', head, '-F', '-'], {
      ...opts,
      input: options.message,
      env: identity,
    })
  ).trim();
  await git(['update-ref', '-m', 'docwright: commit', 'HEAD', commit, head], opts);
  checkout.head = { commit, tree };
  // The checkout's index now matches the commit (a later rebase needs a clean one).
  if (index) await rename(index, path.join(checkout.gitDir, 'index'));
  return true;
}

/**
 * The commit message of docs/git.mdx: title, blank line, summary, trailer (and, with `runId`, a
 * second trailer naming the run, which a retried attempt uses to recognise its predecessor's
 * push). Cleaned as `git commit` would (it is written with `commit-tree`, which takes it
 * verbatim): no trailing whitespace, no runs of blank lines, and a title of one line.
 */
export function commitMessage(title: string, summary: string, runId?: string): string {
  const clean = (text: string) =>
    text
      .replace(/\r\n?/g, '\n')
      .replace(/[ \t]+$/gm, '')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  const subject = clean(title).replace(/\s*\n\s*/g, ' ');
  const body = clean(summary);
  const trailers = `Generated-By: docwright\n${runId ? `${RUN_TRAILER}: ${runId}\n` : ''}`;
  return `${subject}\n\n${body === '' ? '' : `${body}\n\n`}${trailers}`;
}
