/**
 * Exactly once (docs/automations.mdx): one run per (automation, change) and per (automation, scheduled
 * time), whether a change arrives by webhook, by poll, by both, twice, or at several processes.
 *
 * A change has a set of keys; the run is stored with all of them, unique per automation (a table
 * of `(automation_id, key)` with a unique constraint, written in the run's transaction). A change
 * any of whose keys is already there is the same change again: it creates nothing, and its other
 * keys are added to the run found (`insert … on conflict do nothing`), so that a later report
 * sharing only those is known too (a push first, then the pull request's event, then a poll that
 * knows only the number). Of two processes writing overlapping keys, the database lets one
 * commit; the other finds the run.
 *
 * The keys name what lands on the watched branch, so that every way a host reports one change
 * shares at least one:
 * - a merged pull/merge request: `pull-request:<repository>:<number>`, and `commit:…` keys for
 *   the commit its merge put on the branch (`mergeCommitSha`) and for its head commit
 *   (`headSha`). The webhook's event and the poll's listing share the number; the push of the
 *   merge shares the commit:
 *   - GitHub: `merge_commit_sha` is the merge commit, the squash commit, or the last rebased
 *     commit, and the push of the merge has it as `after` (and lists it among its commits);
 *   - GitLab: `merge_commit_sha` (merge commit), else `squash_commit_sha`; a fast-forward merge
 *     has neither, and moves the branch to the head commit, which the push has as `after`;
 *   - Gitea and Forgejo: `merge_commit_sha`, as GitHub.
 * - a push with no pull request (or commits the poll lists as pushed directly): `commit:` keys
 *   for the head commit (`after`) and for each commit listed, so that a webhook's push and the
 *   poll's commits of the same push overlap however each groups them.
 * - a scheduled time: `schedule:<instant in ISO 8601 UTC>`; one instant, one key, whichever
 *   time zone or daylight saving time produced it.
 *
 * `<repository>` is the context repository's name (`docs` for the project's own): the same on
 * both paths (the hook URL's `{name}`, the poll's repository), and unlike a URL it does not
 * change with a host's public address.
 *
 * A push that merges a pull request lists the request's commits too, and a webhook's push may
 * arrive before the pull request's event: then it would run first, as a push, without the
 * request's labels. A webhook's push is not mapped to its pull request here (that would cost a
 * host call per push); it waits instead: the automation loop processes a push delivery only
 * after `pushSettleMs` (default 20 s, src/worker/automation-loop.ts), by when the pull request's
 * event, sent beside it, has made the run with the merge commit's key, which the push's `after`
 * shares, so the push creates nothing. When no pull request event comes (a hook subscribed to
 * pushes only), the push runs as a push, loop safety reading its commits (the host's merge
 * commit names the merged branch, loop-safety.ts); the poll, whose listing does tell a merged
 * pull request's commits from direct pushes (merged-changes.ts), then finds the pull request
 * under the same merge commit key and creates nothing.
 */

export interface MergedChangeKeys {
  number: number;
  mergeCommitSha: string | null;
  headSha: string | null;
}

/** The keys of a merged pull/merge request of `repository`, the number's first. */
export function pullRequestKeys(repository: string, change: MergedChangeKeys): string[] {
  return distinct([
    `pull-request:${repository}:${change.number}`,
    ...[change.mergeCommitSha, change.headSha].flatMap((sha) => (sha ? [commitKey(repository, sha)] : [])),
  ]);
}

/**
 * The keys of commits pushed to `repository`: `after`, the branch's commit after the push (or
 * the last of the commits), first, then each of `shas`.
 */
export function pushKeys(repository: string, shas: readonly string[], after?: string): string[] {
  const head = after ?? shas.at(-1);
  if (head === undefined) throw new RangeError('a push has at least one commit');
  return distinct([head, ...shas].map((sha) => commitKey(repository, sha)));
}

/** The key of an automation's run for a scheduled time. */
export function scheduleKey(scheduledFor: Date): string {
  return `schedule:${scheduledFor.toISOString()}`;
}

/** Whether a change with `keys` was already recorded (any key is). */
export const alreadyRecorded = (keys: readonly string[], recorded: ReadonlySet<string>): boolean =>
  keys.some((key) => recorded.has(key));

const commitKey = (repository: string, sha: string) => `commit:${repository}:${sha.toLowerCase()}`;

const distinct = (keys: string[]) => [...new Set(keys)];
