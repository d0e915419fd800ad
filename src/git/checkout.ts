import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRedactor, type Redact } from '../redact.ts';
import { branchNameProblem } from '../ref-name.ts';
import { credentialSecrets } from './credentials.ts';
import { GitError, type GitOptions, git } from './git.ts';
import { headBranchRefusal } from './head-branch.ts';
import { HostError } from './hosts/host.ts';
import type { MirrorCache } from './mirror.ts';
import { listRemoteRefs, type RemoteRefs } from './remote-refs.ts';

/** A run's private working copy; `remove()` deletes it whatever happened. */
export interface Checkout {
  dir: string;
  /** The checkout's git directory (`<dir>/.git`, or a mirror's `worktrees/<id>`). */
  gitDir: string;
  /** Whether only some folders are checked out (the commit still holds the whole tree). */
  sparse: boolean;
  /** The head branch the run commits to. */
  branch: string;
  /** The job's base ref (`CheckoutOptions.ref`). */
  baseRef: string;
  /** The remote's default branch when the checkout was made, or null when it names none. */
  defaultBranch: string | null;
  /** Whether the branch already existed on the remote (a follow-up run). */
  existing: boolean;
  /** The commit the run started from: the run's own commits are those after it. */
  base: string;
  /**
   * HEAD and its tree as docwright last set them (checkout, commit, replay onto a moved branch):
   * read once instead of by a git process at every step.
   */
  head: { commit: string; tree: string };
  /**
   * The remote tip an earlier attempt of this same run pushed (its server died mid-run): the
   * run starts from before it and its push replaces it, so the branch holds one attempt's change.
   */
  replaces: string | null;
  /** What the checkout was made with that it does not show (commit.ts and push.ts need it). */
  context?: CheckoutContext;
  remove(): Promise<void>;
}

export interface CheckoutOptions {
  /** Clone URL (file:// for local repositories), without credentials. */
  remote: string;
  /** Base branch (or tag) for a new head branch. */
  ref: string;
  branch: string;
  /**
   * Whether the head branch, found on the remote, is one docwright created for this project: only
   * such a branch is continued (see head-branch.ts). Asked at checkout and again by the pusher
   * when the branch appeared meanwhile. Default: none is.
   */
  ownsBranch?: () => Promise<boolean>;
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
  /**
   * The run this checkout is for, when it may be a retry: commits on the branch whose
   * `Docwright-Run` trailer names it were pushed by an earlier attempt and are replaced.
   */
  runId?: string;
  /**
   * Make the checkout from the project's mirror (see mirror.ts) instead of cloning: `project`
   * names the mirror. Without it, the run clones the remote.
   */
  mirror?: { cache: MirrorCache; project: string };
  /**
   * With a mirror: check out only these folders, plus the files directly in the root and in
   * each of their ancestors (git's cone mode). The commit still holds the whole tree.
   */
  sparse?: string[];
  /** Told when the mirror could not be used and the run cloned the remote instead. */
  onMirrorFailure?: (error: unknown) => void;
}

/** Runs `fetch` so that it cannot race another process's changes to a shared mirror. */
export type FetchLock = <T>(fetch: () => Promise<T>) => Promise<T>;
export const unlocked: FetchLock = (fetch) => fetch();

export interface Context {
  env: Record<string, string> | undefined;
  redact: Redact;
  runId: string | undefined;
  /** Held by fetches into the checkout (a mirror's worktree shares its object store and shallow list). */
  lock: FetchLock;
  ownsBranch: () => Promise<boolean>;
}

/**
 * A checkout's credentials and helpers, in a private field: logging or serialising a Checkout
 * can never show them.
 */
export class CheckoutContext {
  readonly #context: Context;
  constructor(context: Context) {
    this.#context = context;
  }
  get env(): Record<string, string> | undefined {
    return this.#context.env;
  }
  get redact(): Redact {
    return this.#context.redact;
  }
  get runId(): string | undefined {
    return this.#context.runId;
  }
  get lock(): FetchLock {
    return this.#context.lock;
  }
  get ownsBranch(): () => Promise<boolean> {
    return this.#context.ownsBranch;
  }
  toJSON(): string {
    return '[checkout context]';
  }
}

export const defaultRedact = (env: Record<string, string> | undefined): Redact =>
  createRedactor(credentialSecrets(env));

export const gitReason = (error: GitError) => error.message.replace(/^git \S+ failed: /, '');

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
  if (/does not appear to be a git repository|repository '[^']*' does not exist/i.test(text)) {
    // git's last line is the tail of a hint ("and the repository exists."): say its first error.
    const fatal = /^fatal: (.+)$/m.exec(text)?.[1] ?? reason;
    return new HostError(
      'repository-not-found',
      `the repository is missing or is not a git repository (${fatal}): was it moved or deleted? ` +
        'Point the project at it: docwright project update <id> --repository <path-or-url>',
      { cause: error },
    );
  }
  if (/returned error: 30[12378]\b/.test(text)) {
    // With credentials git follows no redirect (credentials.ts): after one it would send them on.
    return new HostError(
      'repository-not-found',
      `the remote answered with a redirect (${reason}); git follows no redirect with credentials, ` +
        'so that they reach no other origin: set the repository URL to the address that serves it',
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

/** What a checkout method made in the run's directory. */
interface Made {
  /** Whether the head branch exists on the remote (the run continues it). */
  existing: boolean;
  defaultBranch: string | null;
  gitDir: string;
  sparse: boolean;
  lock: FetchLock;
}

/** The remote's refs a run needs: its head branch, and its base as a branch or a tag. */
const wantedRefs = (options: CheckoutOptions) => ({
  head: `refs/heads/${options.branch}`,
  branch: `refs/heads/${options.ref}`,
  tag: `refs/tags/${options.ref}`,
});

/** Lists which of the wanted refs exist on the remote, and its default branch. */
function listWantedRefs(options: CheckoutOptions, opts: GitOptions): Promise<RemoteRefs> {
  const wanted = wantedRefs(options);
  return listRemoteRefs(options.remote, [wanted.head, wanted.branch, wanted.tag], opts);
}

/** Where a run starts: its head branch when that exists, else its base. */
interface Start {
  ref: string;
  existing: boolean;
  defaultBranch: string | null;
}

/** The ref the run starts from (its head branch when that exists); fails when neither it nor the base exists. */
function startRef(options: CheckoutOptions, { refs, defaultBranch }: RemoteRefs): Start {
  const wanted = wantedRefs(options);
  if (refs.has(wanted.head)) return { ref: wanted.head, existing: true, defaultBranch };
  if (refs.has(wanted.branch)) return { ref: wanted.branch, existing: false, defaultBranch };
  if (refs.has(wanted.tag)) return { ref: wanted.tag, existing: false, defaultBranch };
  throw new HostError('ref-not-found', `the ref ${JSON.stringify(options.ref)} does not exist on the remote`);
}

/**
 * Lists the remote's refs and fetches the one to start from with `fetch`. A job's first run
 * (`likelyNew`) fetches the base branch while the refs are listed, saving a round trip; if the
 * head branch exists after all, or the base is a tag, that is fetched next.
 */
async function listAndFetch(
  options: CheckoutOptions,
  opts: GitOptions,
  fetch: (ref: string) => Promise<unknown>,
  beforeRefetch: () => Promise<void> = async () => {},
): Promise<Start> {
  if (!options.likelyNew) {
    const start = startRef(options, await listWantedRefs(options, opts));
    await fetch(start.ref);
    return start;
  }
  const guess = wantedRefs(options).branch;
  const [listed, fetched] = await Promise.allSettled([listWantedRefs(options, opts), fetch(guess)]);
  if (listed.status === 'rejected') throw listed.reason;
  const start = startRef(options, listed.value);
  if (start.ref === guess) {
    if (fetched.status === 'rejected') throw fetched.reason;
  } else {
    await beforeRefetch();
    await fetch(start.ref);
  }
  return start;
}

/** Today's way, and the fallback: a shallow clone of the one ref, straight from the remote. */
async function cloneFromRemote(options: CheckoutOptions, dir: string, opts: GitOptions): Promise<Made> {
  const clone = (ref: string) =>
    git(
      [
        'clone',
        '--quiet',
        '--depth',
        '1',
        '--single-branch',
        '--no-tags',
        '--branch',
        ref.replace(/^refs\/(heads|tags)\//, ''),
        '--',
        options.remote,
        dir,
      ],
      opts,
    );
  // An earlier attempt pushed the branch after all: its clone replaces the base's.
  const { ref, existing, defaultBranch } = await listAndFetch(options, opts, clone, () =>
    removeContents(dir),
  );
  const local: GitOptions = { ...opts, cwd: dir };
  if (!existing) {
    // Renaming the cloned branch leaves the index alone; `checkout -b` would rewrite it, and
    // with every file as new as the index, git re-reads them all to do so.
    if (ref === wantedRefs(options).branch)
      await git(['branch', '--move', '--', options.ref, options.branch], local);
    else await git(['checkout', '--quiet', '-b', options.branch], local);
  }
  return { existing, defaultBranch, gitDir: path.join(dir, '.git'), sparse: false, lock: unlocked };
}

/**
 * A worktree of the project's mirror: the ref to start from is fetched into the mirror (only
 * what changed since the mirror last saw it), added as a detached worktree, narrowed to
 * `options.sparse` when given, and checked out (git fetches the blobs it lacks, in one batch).
 */
async function worktreeFromMirror(
  options: CheckoutOptions,
  dir: string,
  opts: GitOptions,
  rebuild: boolean,
): Promise<Made> {
  const { cache, project } = options.mirror!;
  const lock: FetchLock = (fetch) => cache.use(project, options.remote, fetch, { signal: opts.signal });
  return cache.use(
    project,
    options.remote,
    async (mirror) => {
      const inMirror: GitOptions = { ...opts, cwd: mirror.gitDir };
      const sparse = options.sparse !== undefined && options.sparse.length > 0;
      // A sparse checkout fetches blobs only for its folders, when it checks them out.
      const filter = sparse ? ['--filter=blob:none'] : [];
      const fetch = (ref: string) =>
        git(
          [
            'fetch',
            '--quiet',
            '--no-tags',
            '--no-write-fetch-head',
            '--depth',
            '1',
            ...filter,
            '--',
            'origin',
            `+${ref}:${ref}`,
          ],
          inMirror,
        );
      const { ref, existing, defaultBranch } = await listAndFetch(options, opts, fetch);
      await git(['worktree', 'add', '--quiet', '--detach', '--no-checkout', '--', dir, ref], inMirror);
      const local: GitOptions = { ...opts, cwd: dir };
      // A sparse index holds the folders outside the cone as one entry each: it stays small however large the repository.
      if (sparse)
        await git(['sparse-checkout', 'set', '--cone', '--sparse-index', '--', ...options.sparse!], local);
      await git(['reset', '--quiet', '--hard'], local);
      const link = await readFile(path.join(dir, '.git'), 'utf8');
      const gitDir = path.resolve(dir, link.replace(/^gitdir: /, '').trim());
      return { existing, defaultBranch, gitDir, sparse, lock };
    },
    { rebuild, signal: opts.signal },
  );
}

/** A failure of the remote (or a stop) that no other way of checking out would avoid. */
function isRemoteFailure(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted || classifyGitError(error) instanceof HostError) return true;
  const text = error instanceof GitError ? error.stderr : '';
  return /unable to access|could not resolve host|failed to connect|connection (refused|reset|timed out)|RPC failed|early EOF|remote end hung up|unexpected disconnect/i.test(
    text,
  );
}

/**
 * The checkout from the mirror. A failure that is not the remote's (a corrupt or half-written
 * mirror, a disk problem) rebuilds the mirror and tries once more; when that fails too, the
 * caller clones the remote instead (undefined), so a broken cache never fails a run.
 */
async function checkoutFromMirror(
  options: CheckoutOptions,
  dir: string,
  opts: GitOptions,
): Promise<Made | undefined> {
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      return await worktreeFromMirror(options, dir, opts, attempt > 1);
    } catch (error) {
      if (isRemoteFailure(error, opts.signal)) throw error;
      options.onMirrorFailure?.(error);
      await removeContents(dir);
    }
  }
  return undefined;
}

/** Empties the run's directory (a failed attempt's files), keeping the directory. */
async function removeContents(dir: string): Promise<void> {
  await removeDir(dir);
  await mkdir(dir, { mode: 0o700 });
}

/**
 * Checks out only what the run needs: the head branch if an earlier run pushed it (follow-ups
 * add commits to it), otherwise the tip of the base — from the project's mirror when one is
 * given (see mirror.ts), else by a shallow clone — so the cost grows with what changes, not
 * with the repository's history. On any failure, abort included, the directory is gone before
 * this rejects.
 */
export async function checkoutForRun(options: CheckoutOptions): Promise<Checkout> {
  // Names stored before they were validated as strictly must not reach git either.
  for (const [what, name] of [
    ['head branch', options.branch],
    ['base ref', options.ref],
  ] as const) {
    const problem = branchNameProblem(name);
    if (problem) {
      throw new HostError(
        'invalid-branch-name',
        `the ${what} ${JSON.stringify(name)} is not a valid git branch name: it ${problem}`,
      );
    }
  }
  const dir = await mkdtemp(path.join(options.tmpDir ?? tmpdir(), 'docwright-run-'));
  let gitDir: string | undefined;
  const remove = async () => {
    await removeDir(dir);
    // A mirror's worktree: its entry in the mirror goes too (git would prune it later).
    if (gitDir && !isInside(gitDir, dir)) await removeDir(gitDir);
  };
  const redact = options.redact ?? defaultRedact(options.env);
  const base: GitOptions = { signal: options.signal, env: options.env, redact };
  try {
    const made =
      (options.mirror ? await checkoutFromMirror(options, dir, base) : undefined) ??
      (await cloneFromRemote(options, dir, base));
    gitDir = made.gitDir;
    const local: GitOptions = { ...base, cwd: dir };
    let replaces: string | null = null;
    if (made.existing && options.runId !== undefined) {
      const earlier = await earlierAttempt(
        local,
        made.lock,
        options.runId,
        'HEAD',
        'origin',
        `refs/heads/${options.branch}`,
      );
      if (earlier) {
        await git(['reset', '--quiet', '--hard', earlier.parent], local);
        replaces = earlier.tip;
      }
    }
    // Before the run does anything: it could never push to this branch.
    const ownsBranch = options.ownsBranch ?? (async () => false);
    const refusal = await headBranchRefusal({
      branch: options.branch,
      base: options.ref,
      defaultBranch: made.defaultBranch,
      exists: made.existing && replaces === null,
      owned: ownsBranch,
    });
    if (refusal) throw refusal;
    const head = await readHead(local);
    const checkout: Checkout = {
      dir,
      gitDir: made.gitDir,
      sparse: made.sparse,
      branch: options.branch,
      baseRef: options.ref,
      defaultBranch: made.defaultBranch,
      existing: made.existing,
      base: head.commit,
      head,
      replaces,
      context: new CheckoutContext({
        env: options.env,
        redact,
        runId: options.runId,
        lock: made.lock,
        ownsBranch,
      }),
      remove,
    };
    return checkout;
  } catch (error) {
    await remove();
    throw classifyGitError(error);
  }
}

/** HEAD's commit and tree, in one git process. */
export async function readHead(opts: GitOptions): Promise<Checkout['head']> {
  const [commit = '', tree = ''] = (await git(['rev-parse', 'HEAD', 'HEAD^{tree}'], opts)).trim().split('\n');
  return { commit, tree };
}

const isInside = (file: string, dir: string) => !path.relative(dir, file).startsWith('..');

/**
 * Runs `git fetch <args>` in the checkout, under its mirror's lock when it has one (a worktree
 * shares the mirror's object store and list of shallow commits with every other run).
 */
export function fetchIntoCheckout(checkout: Checkout, args: string[], opts: GitOptions): Promise<string> {
  const lock = checkout.context?.lock ?? unlocked;
  return lock(() => git(['fetch', ...args], { ...opts, cwd: checkout.dir }));
}

/** The trailer that names the run a commit belongs to (see `Checkout.replaces`). */
export const RUN_TRAILER = 'Docwright-Run';

/**
 * When `ref`'s tip was committed by `runId` (an earlier attempt of the run pushed it before its
 * server died), that tip and its parent — the state the run should start from. The parent is
 * fetched when the clone is too shallow to hold it.
 */
export async function earlierAttempt(
  opts: GitOptions,
  lock: FetchLock,
  runId: string,
  ref: string,
  remote: string,
  remoteRef: string,
): Promise<{ tip: string; parent: string } | null> {
  const [tip = '', ...message] = (await git(['log', '-1', '--format=%H%n%B', ref], opts)).split('\n');
  const pattern = new RegExp(`^${RUN_TRAILER}: ${runId}$`, 'm');
  if (!pattern.test(message.join('\n'))) return null;
  let parent = await git(['rev-parse', '--verify', '--quiet', `${tip}^`], opts).catch(() => '');
  if (!parent.trim()) {
    await lock(() =>
      git(['fetch', '--quiet', '--no-tags', '--depth', '2', '--', remote, remoteRef], opts),
    ).catch((error) => {
      throw classifyGitError(error);
    });
    parent = await git(['rev-parse', `${tip}^`], opts);
  }
  return { tip, parent: parent.trim() };
}
