import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRedactor, type Redact } from '../redact.ts';
import { credentialSecrets } from './credentials.ts';
import { GitError, type GitOptions, git } from './git.ts';
import { HostError } from './hosts/host.ts';

/** A run's private working copy; `remove()` deletes it whatever happened. */
export interface Checkout {
  dir: string;
  /** The head branch the run commits to. */
  branch: string;
  /** Whether the branch already existed on the remote (a follow-up run). */
  existing: boolean;
  /** The commit the run started from: the run's own commits are those after it. */
  base: string;
  remove(): Promise<void>;
}

export interface CheckoutOptions {
  /** Clone URL (file:// for local repositories), without credentials. */
  remote: string;
  /** Base branch (or tag) for a new head branch. */
  ref: string;
  branch: string;
  signal?: AbortSignal;
  /** Credentials for git (see gitCredentialEnv); used for every command that talks to the remote. */
  env?: Record<string, string>;
  /** Redacts git's messages; by default built from the credentials in `env`. */
  redact?: Redact;
  /** Where the temporary checkout is created (default: the system's temporary directory). */
  tmpDir?: string;
  /**
   * The head branch most likely does not exist yet (a job's first run): the base is cloned while
   * the refs are listed, saving a round trip; if the branch exists after all, it is cloned instead.
   */
  likelyNew?: boolean;
}

interface Context {
  env: Record<string, string> | undefined;
  redact: Redact;
}

/** Credentials stay out of the Checkout object, so logging it can never leak them. */
const contexts = new WeakMap<Checkout, Context>();

const defaultRedact = (env: Record<string, string> | undefined): Redact =>
  createRedactor(credentialSecrets(env));

const gitReason = (error: GitError) => error.message.replace(/^git \S+ failed: /, '');

/**
 * The host error a git failure stands for, or the error itself when it is none of them.
 * GitErrors are already redacted (git() got the redactor), so their text can be reused.
 */
export function classifyGitError(error: unknown): unknown {
  if (!(error instanceof GitError)) return error;
  const text = error.stderr;
  const reason = gitReason(error);
  if (
    /could not read (username|password)|authentication failed|returned error: 401|HTTP Basic: Access denied|invalid username or password|bad credentials/i.test(
      text,
    )
  ) {
    return new HostError('host-auth-failed', `the code host rejected the credentials (${reason})`, {
      cause: error,
    });
  }
  if (
    /returned error: 403|permission to \S+ denied|permission denied for (reading|writing)|not allowed to (push|access)|write access to repository not granted/i.test(
      text,
    )
  ) {
    return new HostError(
      'host-permission-denied',
      `the credentials may not do this on the repository (${reason})`,
      { cause: error },
    );
  }
  if (/repository '[^']*' not found|remote: repository not found/i.test(text)) {
    return new HostError(
      'host-permission-denied',
      `the repository was not found, or the credentials may not see it (${reason})`,
      { cause: error },
    );
  }
  if (/remote branch \S+ not found in upstream|couldn't find remote ref/i.test(text)) {
    return new HostError('ref-not-found', `the ref does not exist on the remote (${reason})`, {
      cause: error,
    });
  }
  return error;
}

async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}

/**
 * Clones only what the run needs: the head branch if an earlier run pushed
 * it (follow-ups add commits to it), otherwise the tip of the base branch —
 * so the cost grows with what changes, not with the repository's history.
 * On any failure, abort included, the directory is gone before this rejects.
 */
export async function checkoutForRun(options: CheckoutOptions): Promise<Checkout> {
  const dir = await mkdtemp(path.join(options.tmpDir ?? tmpdir(), 'docwright-run-'));
  const remove = () => removeDir(dir);
  const redact = options.redact ?? defaultRedact(options.env);
  const base: GitOptions = { signal: options.signal, env: options.env, redact };
  try {
    const wanted = [`refs/heads/${options.branch}`, `refs/heads/${options.ref}`, `refs/tags/${options.ref}`];
    const listRefs = async () => {
      const listed = await git(['ls-remote', '--', options.remote, ...wanted], base);
      return new Set(listed.split('\n').map((line) => line.split('\t')[1]?.trim()));
    };
    const clone = (from: string) =>
      git(
        [
          'clone',
          '--quiet',
          '--depth',
          '1',
          '--single-branch',
          '--no-tags',
          '--branch',
          from,
          '--',
          options.remote,
          dir,
        ],
        base,
      );
    /** Whether the head branch exists; fails when neither it nor the base ref does. */
    const headExists = (refs: Set<string | undefined>) => {
      if (refs.has(wanted[0])) return true;
      if (refs.has(wanted[1]) || refs.has(wanted[2])) return false;
      throw new HostError(
        'ref-not-found',
        `the ref ${JSON.stringify(options.ref)} does not exist on the remote`,
      );
    };
    let refs: Set<string | undefined>;
    let existing: boolean;
    if (options.likelyNew) {
      // A first run saves a round trip: list the refs while cloning the base.
      const [listed, cloned] = await Promise.allSettled([listRefs(), clone(options.ref)]);
      if (listed.status === 'rejected') throw listed.reason;
      refs = listed.value;
      existing = headExists(refs);
      if (cloned.status === 'rejected') throw cloned.reason;
      if (existing) {
        // An earlier attempt pushed the branch after all: work on it instead.
        await removeDir(dir);
        await clone(options.branch);
      }
    } else {
      refs = await listRefs();
      existing = headExists(refs);
      await clone(existing ? options.branch : options.ref);
    }
    const local: GitOptions = { ...base, cwd: dir };
    if (!existing) {
      // Renaming the cloned branch leaves the index alone; `checkout -b` would rewrite it, and
      // with every file as new as the index, git re-reads them all to do so.
      if (refs.has(wanted[1])) await git(['branch', '--move', options.ref, options.branch], local);
      else await git(['checkout', '--quiet', '-b', options.branch], local);
    }
    const head = (await git(['rev-parse', 'HEAD'], local)).trim();
    const checkout: Checkout = { dir, branch: options.branch, existing, base: head, remove };
    contexts.set(checkout, { env: options.env, redact });
    return checkout;
  } catch (error) {
    await remove();
    throw classifyGitError(error);
  }
}

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
 * site. An index read from a tree holds no timestamps, so only the staged files are read.
 */
export async function commitFiles(checkout: Checkout, options: CommitOptions): Promise<boolean> {
  if (options.files.length === 0) return false;
  const opts: GitOptions = {
    cwd: checkout.dir,
    signal: options.signal,
    redact: contexts.get(checkout)?.redact,
  };
  const gitDir = path.join(checkout.dir, '.git');
  const index = path.join(gitDir, 'docwright-index');
  const staging: GitOptions = { ...opts, env: { GIT_INDEX_FILE: index } };
  await git(['read-tree', 'HEAD'], staging);
  // Paths on stdin, NUL-separated: taken literally, never as options or pathspec magic.
  await git(['update-index', '--add', '--remove', '-z', '--stdin'], {
    ...staging,
    input: `${options.files.join('\0')}\0`,
  });
  const tree = (await git(['write-tree'], staging)).trim();
  const [head = '', headTree] = (await git(['rev-parse', 'HEAD', 'HEAD^{tree}'], opts)).trim().split('\n');
  if (tree === headTree) {
    await rm(index, { force: true });
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
  // The checkout's index now matches the commit (a later rebase needs a clean one).
  await rename(index, path.join(gitDir, 'index'));
  return true;
}

/**
 * The commit message of SPEC §8: title, blank line, summary, trailer. Cleaned as `git commit`
 * would (it is written with `commit-tree`, which takes it verbatim): no trailing whitespace,
 * no runs of blank lines, and a title of one line.
 */
export function commitMessage(title: string, summary: string): string {
  const clean = (text: string) =>
    text
      .replace(/\r\n?/g, '\n')
      .replace(/[ \t]+$/gm, '')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  const subject = clean(title).replace(/\s*\n\s*/g, ' ');
  const body = clean(summary);
  return `${subject}\n\n${body === '' ? '' : `${body}\n\n`}Generated-By: docwright\n`;
}

export interface PushOptions {
  /** Remote name or URL (default `origin`, the URL the checkout was cloned from). */
  remote?: string;
  signal?: AbortSignal;
  /** Credentials; default: those the checkout was made with. */
  env?: Record<string, string>;
  redact?: Redact;
}

/** A push refused because the remote branch is not an ancestor of ours (someone pushed meanwhile). */
const isOutdated = (error: unknown) =>
  error instanceof GitError && /\[rejected\].*\((fetch first|non-fast-forward)\)/.test(error.stderr);

/**
 * Pushes the head branch. If the remote branch moved since the checkout (another run or a
 * person pushed to it), fetches its tip, replays the run's commits onto it and pushes once
 * more; when they conflict or it moves again, fails with `push-rejected`.
 */
export async function pushBranch(checkout: Checkout, options: PushOptions = {}): Promise<void> {
  const context = contexts.get(checkout);
  const env = options.env ?? context?.env;
  const redact = options.redact ?? context?.redact ?? defaultRedact(env);
  const remote = options.remote ?? 'origin';
  const opts: GitOptions = { cwd: checkout.dir, signal: options.signal, env, redact };
  const push = () => git(['push', '--quiet', '--', remote, `HEAD:refs/heads/${checkout.branch}`], opts);
  try {
    await push();
    return;
  } catch (error) {
    if (!isOutdated(error)) throw pushFailure(error, checkout.branch);
  }
  await rebaseOntoRemote(checkout, remote, opts);
  try {
    await push();
  } catch (error) {
    if (isOutdated(error)) {
      throw new HostError(
        'push-rejected',
        `the remote branch ${checkout.branch} kept moving while the run pushed to it`,
        { cause: error },
      );
    }
    throw pushFailure(error, checkout.branch);
  }
}

function pushFailure(error: unknown, branch: string): unknown {
  if (error instanceof GitError && /\[remote rejected\]/.test(error.stderr)) {
    return new HostError('push-rejected', `the host refused the push to ${branch} (${gitReason(error)})`, {
      cause: error,
    });
  }
  return classifyGitError(error);
}

/**
 * Replays the commits after `checkout.base` onto the remote branch's tip. Only that tip is
 * fetched (depth 1): replaying a commit needs its parent's tree and the new base's tree, not
 * the history between them, so no deepening is required however far the branch moved.
 */
async function rebaseOntoRemote(checkout: Checkout, remote: string, opts: GitOptions): Promise<void> {
  const tracking = `refs/docwright/remote/${checkout.branch}`;
  try {
    await git(
      [
        'fetch',
        '--quiet',
        '--no-tags',
        '--depth',
        '1',
        '--',
        remote,
        `+refs/heads/${checkout.branch}:${tracking}`,
      ],
      opts,
    );
  } catch (error) {
    throw classifyGitError(error);
  }
  // Rebasing rewrites the commits: keep the committer the run's commits were made with.
  const [name = '', email = ''] = (await git(['log', '-1', '--format=%cn%x00%ce', 'HEAD'], opts))
    .trim()
    .split('\0');
  const identity = { ...opts.env, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
  try {
    await git(['rebase', '--quiet', '--no-autostash', '--onto', tracking, checkout.base], {
      ...opts,
      env: identity,
    });
  } catch (error) {
    await git(['rebase', '--abort'], { ...opts, signal: undefined }).catch(() => {});
    if (error instanceof GitError) {
      throw new HostError(
        'push-rejected',
        `the remote branch ${checkout.branch} moved and the run's changes conflict with it`,
        { cause: error },
      );
    }
    throw error;
  }
}
