import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type GitOptions, git } from './git.ts';

/** A run's private working copy; `remove()` deletes it whatever happened. */
export interface Checkout {
  dir: string;
  /** The head branch the run commits to. */
  branch: string;
  /** Whether the branch already existed on the remote (a follow-up run). */
  existing: boolean;
  remove(): Promise<void>;
}

export interface CheckoutOptions {
  /** Clone URL (file:// for local repositories). */
  remote: string;
  /** Base branch for a new head branch. */
  ref: string;
  branch: string;
  signal?: AbortSignal;
  env?: Record<string, string>;
}

/**
 * Clones only what the run needs: the head branch if an earlier run pushed
 * it (follow-ups add commits to it), otherwise the tip of the base branch —
 * so the cost grows with what changes, not with the repository's history.
 */
export async function checkoutForRun(options: CheckoutOptions): Promise<Checkout> {
  const dir = await mkdtemp(path.join(tmpdir(), 'docwright-run-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  const base: GitOptions = { signal: options.signal, env: options.env };
  try {
    const heads = await git(
      ['ls-remote', '--heads', '--', options.remote, `refs/heads/${options.branch}`],
      base,
    );
    const existing = heads.trim() !== '';
    const from = existing ? options.branch : options.ref;
    await git(
      ['clone', '--quiet', '--depth', '1', '--single-branch', '--branch', from, '--', options.remote, dir],
      base,
    );
    if (!existing) await git(['checkout', '--quiet', '-b', options.branch], { ...base, cwd: dir });
    return { dir, branch: options.branch, existing, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

export interface CommitOptions {
  /** Repository-relative paths to stage (the agent's checked set); nothing else is committed. */
  files: string[];
  message: string;
  author: { name: string; email: string };
  signal?: AbortSignal;
}

/** Commits exactly `files`; returns false when they hold no change. */
export async function commitFiles(checkout: Checkout, options: CommitOptions): Promise<boolean> {
  if (options.files.length === 0) return false;
  const opts: GitOptions = { cwd: checkout.dir, signal: options.signal };
  await git(['add', '--all', '--', ...options.files.map((f) => `:(literal)${f}`)], opts);
  const staged = await git(['diff', '--cached', '--name-only', '-z'], opts);
  if (staged === '') return false;
  const identity = {
    GIT_AUTHOR_NAME: options.author.name,
    GIT_AUTHOR_EMAIL: options.author.email,
    GIT_COMMITTER_NAME: options.author.name,
    GIT_COMMITTER_EMAIL: options.author.email,
  };
  await git(['commit', '--quiet', '--no-verify', '-F', '-'], {
    ...opts,
    input: options.message,
    env: identity,
  });
  return true;
}

/** The commit message of SPEC §8: title, blank line, summary, trailer. */
export function commitMessage(title: string, summary: string): string {
  return `${title.trim()}\n\n${summary.trim()}\n\nGenerated-By: docwright\n`;
}

/** Pushes the head branch to the remote. */
export async function pushBranch(
  checkout: Checkout,
  options: { remote?: string; signal?: AbortSignal; env?: Record<string, string> } = {},
): Promise<void> {
  await git(['push', '--quiet', options.remote ?? 'origin', `HEAD:refs/heads/${checkout.branch}`], {
    cwd: checkout.dir,
    signal: options.signal,
    env: options.env,
  });
}
