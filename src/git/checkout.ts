import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRedactor, type Redact } from '../redact.ts';
import { credentialSecrets } from './credentials.ts';
import { GitError, type GitOptions, git } from './git.ts';
import { HostError } from './hosts/host.ts';
import type { MirrorCache } from './mirror.ts';
import { branchNameProblem } from './ref-name.ts';

/** A run's private working copy; `remove()` deletes it whatever happened. */
export interface Checkout {
  dir: string;
  /** The checkout's git directory (`<dir>/.git`, or a mirror's `worktrees/<id>`). */
  gitDir: string;
  /** Whether only some folders are checked out (the commit still holds the whole tree). */
  sparse: boolean;
  /** The head branch the run commits to. */
  branch: string;
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
type FetchLock = <T>(fetch: () => Promise<T>) => Promise<T>;
const unlocked: FetchLock = (fetch) => fetch();

interface Context {
  env: Record<string, string> | undefined;
  redact: Redact;
  runId: string | undefined;
  /** Held by fetches into the checkout (a mirror's worktree shares its object store and shallow list). */
  lock: FetchLock;
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

/** Lists which of the wanted refs exist on the remote. */
async function listRemoteRefs(options: CheckoutOptions, opts: GitOptions): Promise<Set<string | undefined>> {
  const wanted = wantedRefs(options);
  const listed = await git(['ls-remote', '--', options.remote, wanted.head, wanted.branch, wanted.tag], opts);
  return new Set(listed.split('\n').map((line) => line.split('\t')[1]?.trim()));
}

/** The ref the run starts from (its head branch when that exists); fails when neither it nor the base exists. */
function startRef(
  options: CheckoutOptions,
  refs: Set<string | undefined>,
): { ref: string; existing: boolean } {
  const wanted = wantedRefs(options);
  if (refs.has(wanted.head)) return { ref: wanted.head, existing: true };
  if (refs.has(wanted.branch)) return { ref: wanted.branch, existing: false };
  if (refs.has(wanted.tag)) return { ref: wanted.tag, existing: false };
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
): Promise<{ ref: string; existing: boolean }> {
  if (!options.likelyNew) {
    const start = startRef(options, await listRemoteRefs(options, opts));
    await fetch(start.ref);
    return start;
  }
  const guess = wantedRefs(options).branch;
  const [listed, fetched] = await Promise.allSettled([listRemoteRefs(options, opts), fetch(guess)]);
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
  const { ref, existing } = await listAndFetch(options, opts, clone, () => removeContents(dir));
  const local: GitOptions = { ...opts, cwd: dir };
  if (!existing) {
    // Renaming the cloned branch leaves the index alone; `checkout -b` would rewrite it, and
    // with every file as new as the index, git re-reads them all to do so.
    if (ref === wantedRefs(options).branch)
      await git(['branch', '--move', '--', options.ref, options.branch], local);
    else await git(['checkout', '--quiet', '-b', options.branch], local);
  }
  return { existing, gitDir: path.join(dir, '.git'), sparse: false, lock: unlocked };
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
      const { ref, existing } = await listAndFetch(options, opts, fetch);
      await git(['worktree', 'add', '--quiet', '--detach', '--no-checkout', '--', dir, ref], inMirror);
      const local: GitOptions = { ...opts, cwd: dir };
      // A sparse index holds the folders outside the cone as one entry each: it stays small however large the repository.
      if (sparse)
        await git(['sparse-checkout', 'set', '--cone', '--sparse-index', '--', ...options.sparse!], local);
      await git(['reset', '--quiet', '--hard'], local);
      const link = await readFile(path.join(dir, '.git'), 'utf8');
      const gitDir = path.resolve(dir, link.replace(/^gitdir: /, '').trim());
      return { existing, gitDir, sparse, lock };
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
    const head = await readHead(local);
    const checkout: Checkout = {
      dir,
      gitDir: made.gitDir,
      sparse: made.sparse,
      branch: options.branch,
      existing: made.existing,
      base: head.commit,
      head,
      replaces,
      remove,
    };
    contexts.set(checkout, { env: options.env, redact, runId: options.runId, lock: made.lock });
    return checkout;
  } catch (error) {
    await remove();
    throw classifyGitError(error);
  }
}

/** HEAD's commit and tree, in one git process. */
async function readHead(opts: GitOptions): Promise<Checkout['head']> {
  const [commit = '', tree = ''] = (await git(['rev-parse', 'HEAD', 'HEAD^{tree}'], opts)).trim().split('\n');
  return { commit, tree };
}

const isInside = (file: string, dir: string) => !path.relative(dir, file).startsWith('..');

/**
 * Runs `git fetch <args>` in the checkout, under its mirror's lock when it has one (a worktree
 * shares the mirror's object store and list of shallow commits with every other run).
 */
export function fetchIntoCheckout(checkout: Checkout, args: string[], opts: GitOptions): Promise<string> {
  const lock = contexts.get(checkout)?.lock ?? unlocked;
  return lock(() => git(['fetch', ...args], { ...opts, cwd: checkout.dir }));
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
 * site. An index read from a tree holds no timestamps, so only the staged files are read. A
 * sparse checkout commits in its own index instead: it holds only the checked-out folders (the
 * rest as one entry per folder), where a full one would list every file of the repository.
 */
export async function commitFiles(checkout: Checkout, options: CommitOptions): Promise<boolean> {
  if (options.files.length === 0) return false;
  const opts: GitOptions = {
    cwd: checkout.dir,
    signal: options.signal,
    redact: contexts.get(checkout)?.redact,
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

/** The trailer that names the run a commit belongs to (see `Checkout.replaces`). */
const RUN_TRAILER = 'Docwright-Run';

/**
 * The commit message of SPEC §8: title, blank line, summary, trailer (and, with `runId`, a
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

/**
 * When `ref`'s tip was committed by `runId` (an earlier attempt of the run pushed it before its
 * server died), that tip and its parent — the state the run should start from. The parent is
 * fetched when the clone is too shallow to hold it.
 */
async function earlierAttempt(
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

export interface PushOptions {
  /** Remote name or URL (default `origin`, the URL the checkout was cloned from). */
  remote?: string;
  signal?: AbortSignal;
  /** Credentials; default: those the checkout was made with. */
  env?: Record<string, string>;
  redact?: Redact;
}

/**
 * A push refused because the remote branch moved: it is not an ancestor of ours (someone pushed
 * meanwhile), or it changed between the host's advertisement and its update (a push that landed
 * during ours, e.g. an earlier attempt's).
 */
const isOutdated = (error: unknown) =>
  error instanceof GitError &&
  (/\[rejected\].*\((fetch first|non-fast-forward|stale info)\)/.test(error.stderr) ||
    /\[remote rejected\].*\((failed to update ref|cannot lock ref|.*reference already exists|.*is at .* but expected)/.test(
      error.stderr,
    ));

/**
 * Pushes the head branch. If the remote branch moved since the checkout (another run or a
 * person pushed to it), fetches its tip, replays the run's commits onto it (`checkout.head`
 * changes) and pushes once more; when they conflict or it moves again, fails with `push-rejected`.
 */
export async function pushBranch(checkout: Checkout, options: PushOptions = {}): Promise<void> {
  const context = contexts.get(checkout);
  const env = options.env ?? context?.env;
  const redact = options.redact ?? context?.redact ?? defaultRedact(env);
  const remote = options.remote ?? 'origin';
  const opts: GitOptions = { cwd: checkout.dir, signal: options.signal, env, redact };
  const target = `refs/heads/${checkout.branch}`;
  // Replacing an earlier attempt's push: only if the branch is still exactly that.
  const lease = () => (checkout.replaces ? [`--force-with-lease=${target}:${checkout.replaces}`] : []);
  const push = () => git(['push', '--quiet', ...lease(), '--', remote, `HEAD:${target}`], opts);
  try {
    await push();
    return;
  } catch (error) {
    if (!isOutdated(error)) throw pushFailure(error, checkout.branch);
  }
  // The branch moved since the checkout. An earlier attempt of this run, whose push landed
  // late (its git outlived the server), is replaced; anyone else's commits are kept.
  const runId = contexts.get(checkout)?.runId;
  const tracking = await fetchRemoteTip(checkout, remote, opts, 2);
  const lock = contexts.get(checkout)?.lock ?? unlocked;
  const earlier = runId ? await earlierAttempt(opts, lock, runId, tracking, remote, target) : null;
  if (earlier && earlier.parent === checkout.base) {
    checkout.replaces = earlier.tip;
  } else {
    await rebaseOntoRemote(checkout, tracking, opts);
  }
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
 * Fetches the remote branch's tip (and `depth - 1` commits below it) to a tracking ref; returns
 * the ref. Replaying a commit needs its parent's tree and the new base's tree, not the history
 * between them, so no deeper fetch is needed however far the branch moved.
 */
async function fetchRemoteTip(
  checkout: Checkout,
  remote: string,
  opts: GitOptions,
  depth = 1,
): Promise<string> {
  // Per worktree: a mirror's worktrees share every other ref.
  const tracking = `refs/worktree/docwright/remote/${checkout.branch}`;
  try {
    await fetchIntoCheckout(
      checkout,
      [
        '--quiet',
        '--no-tags',
        '--depth',
        String(depth),
        '--',
        remote,
        `+refs/heads/${checkout.branch}:${tracking}`,
      ],
      opts,
    );
  } catch (error) {
    throw classifyGitError(error);
  }
  return tracking;
}

/** Replays the commits after `checkout.base` onto `tracking` (the remote branch's tip). */
async function rebaseOntoRemote(checkout: Checkout, tracking: string, opts: GitOptions): Promise<void> {
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
    checkout.head = await readHead(opts);
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
