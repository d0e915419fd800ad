/** Pushing a run's branch, replaying its commits when the branch moved meanwhile. */
import type { Redact } from '../redact.ts';
import {
  type Checkout,
  classifyGitError,
  defaultRedact,
  earlierAttempt,
  fetchIntoCheckout,
  gitReason,
  readHead,
  unlocked,
} from './checkout.ts';
import { GitError, type GitOptions, git } from './git.ts';
import { headBranchRefusal } from './head-branch.ts';
import { HostError } from './hosts/host.ts';

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
 * Pushes the head branch: never to the job's base or the repository's default branch, and to a
 * branch that exists only when docwright created it for the project (head-branch.ts), however
 * the job was made. A branch that did not exist at checkout is created only if it still does not.
 * If the remote branch moved since the checkout (another run or a person pushed to it), fetches
 * its tip, replays the run's commits onto it (`checkout.head` changes) and pushes once more; when
 * they conflict or it moves again, fails with `push-rejected`.
 */
export async function pushBranch(checkout: Checkout, options: PushOptions = {}): Promise<void> {
  const { context } = checkout;
  const env = options.env ?? context?.env;
  const redact = options.redact ?? context?.redact ?? defaultRedact(env);
  const remote = options.remote ?? 'origin';
  const opts: GitOptions = { cwd: checkout.dir, signal: options.signal, env, redact };
  const target = `refs/heads/${checkout.branch}`;
  const refuse = async (exists: boolean) => {
    const refusal = await headBranchRefusal({
      branch: checkout.branch,
      base: checkout.baseRef,
      defaultBranch: checkout.defaultBranch,
      exists,
      owned: context?.ownsBranch ?? (async () => false),
    });
    if (refusal) throw refusal;
  };
  await refuse(checkout.existing && checkout.replaces === null);
  // Replacing an earlier attempt's push: only if the branch is still exactly that. Creating the
  // branch: only if nobody did meanwhile (an empty lease: the ref must not exist).
  const lease = (creating: boolean) =>
    checkout.replaces
      ? [`--force-with-lease=${target}:${checkout.replaces}`]
      : creating
        ? [`--force-with-lease=${target}:`]
        : [];
  const push = (creating: boolean) =>
    git(['push', '--quiet', ...lease(creating), '--', remote, `HEAD:${target}`], opts);
  try {
    await push(!checkout.existing);
    return;
  } catch (error) {
    if (!isOutdated(error)) throw pushFailure(error, checkout.branch);
  }
  // The branch moved since the checkout, or appeared. An earlier attempt of this run, whose push
  // landed late (its git outlived the server), is replaced; a branch of docwright's that someone
  // else pushed to keeps their commits; anyone else's new branch is left alone.
  const runId = context?.runId;
  const tracking = await fetchRemoteTip(checkout, remote, opts, 2);
  const lock = context?.lock ?? unlocked;
  const earlier = runId ? await earlierAttempt(opts, lock, runId, tracking, remote, target) : null;
  if (earlier && earlier.parent === checkout.base) {
    checkout.replaces = earlier.tip;
  } else {
    await refuse(true);
    await rebaseOntoRemote(checkout, tracking, opts);
  }
  try {
    await push(false);
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
