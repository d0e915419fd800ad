/**
 * The polling fallback's listing (docs/automations.mdx), once for every host: which pull requests were
 * merged into a branch after a cursor, which commits were pushed to it directly, and where the
 * next listing starts. The hosts give three things: their merged pull requests, most recently
 * updated first; the branch's commits, newest first; and whether a commit belongs to a merged
 * pull request.
 *
 * Nothing before the cursor, nothing twice: merged pull requests are taken in merge order after
 * `(mergedAt, numbers)`, and pushes along the branch's first-parent line after `sha`.
 */
import {
  type ChangeCursor,
  DEFAULT_LISTING_LIMIT,
  type MergedChanges,
  type MergedChangesQuery,
  type MergedPullRequest,
  type PushedCommit,
} from './change.ts';

/** A pull request of the host's list (closed ones too): when it was last updated, and its merge into the branch. */
export interface ListedPullRequest {
  updatedAt: string;
  /** Null when it was not merged into the branch. */
  merged: MergedPullRequest | null;
}

/** A commit of the branch's log. */
export interface BranchCommit {
  sha: string;
  /** Parent shas, first parent first. */
  parents: string[];
  title: string;
  /** When it was written (a rebase keeps it) and when it was committed. */
  authoredAt: string | null;
  committedAt: string | null;
  url: string | null;
}

export interface MergedChangesSource {
  /** The pull requests closed into the branch, most recently updated first, until `visit` answers false. */
  eachPullRequest(visit: (pull: ListedPullRequest) => boolean): Promise<{ complete: boolean }>;
  /** The branch's commits, its tip first, newest first, until `visit` answers false. */
  eachCommit(visit: (commit: BranchCommit) => boolean): Promise<{ complete: boolean }>;
  /**
   * Whether the commit came into the branch with a merged pull request (a rebase merge's
   * commits); `merged` are the merges this listing found, for hosts that cannot tell by the sha.
   */
  partOfMergedPullRequest(commit: BranchCommit, merged: MergedPullRequest[]): Promise<boolean>;
}

/** Commits of the branch looked at, at most, to find where the last listing stopped. */
export const MAX_COMMITS_WALKED = 500;

const time = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

export async function listMergedChanges(
  query: MergedChangesQuery,
  source: MergedChangesSource,
): Promise<MergedChanges> {
  const limit = Math.max(1, query.limit ?? DEFAULT_LISTING_LIMIT);
  const { since } = query;
  const notes: string[] = [];
  const pulls = await mergedAfter(since, source, notes);
  const taken = pulls.slice(0, limit);
  const mergeShas = new Set(pulls.flatMap((p) => (p.mergeCommitSha ? [p.mergeCommitSha] : [])));
  const pushes = await pushedAfter(since, limit, { shas: mergeShas, pulls }, source, notes);

  const last = taken.at(-1);
  const cursor: ChangeCursor = { mergedAt: since.mergedAt, numbers: since.numbers, sha: pushes.sha };
  if (last) {
    const at = time(last.mergedAt);
    const same = taken.filter((p) => time(p.mergedAt) === at).map((p) => p.number);
    cursor.mergedAt = iso(at);
    cursor.numbers = at === time(since.mergedAt) ? [...new Set([...since.numbers, ...same])] : same;
  } else if (pulls.skippedTo !== undefined) {
    cursor.mergedAt = iso(pulls.skippedTo);
    cursor.numbers = [];
  }
  return {
    merged: taken,
    pushes: pushes.list,
    cursor,
    more: pulls.length > limit || pushes.more,
    notes,
  };
}

/**
 * The pull requests merged after the cursor, in merge order. The host lists them by update
 * time, newest first; one updated before the cursor was merged before it too, and so was
 * everything after it. When the list is longer than the host's pages allow, only merges after
 * the last update seen are certain to be complete: those before it are skipped, and said so.
 */
async function mergedAfter(
  since: ChangeCursor,
  source: MergedChangesSource,
  notes: string[],
): Promise<MergedPullRequest[] & { skippedTo?: number }> {
  const from = time(since.mergedAt);
  const listed = new Set(since.numbers);
  const found: MergedPullRequest[] = [];
  let lastUpdate = Number.POSITIVE_INFINITY;
  const { complete } = await source.eachPullRequest((pull) => {
    const updated = time(pull.updatedAt);
    if (updated < from) return false;
    lastUpdate = Math.min(lastUpdate, updated);
    const merged = pull.merged;
    if (!merged) return true;
    const at = time(merged.mergedAt);
    if (at > from || (at === from && !listed.has(merged.number))) found.push(merged);
    return true;
  });
  let result: MergedPullRequest[] & { skippedTo?: number } = found;
  if (!complete && Number.isFinite(lastUpdate)) {
    result = found.filter((p) => time(p.mergedAt) >= lastUpdate);
    result.skippedTo = lastUpdate;
    notes.push(
      `too many pull requests were updated since ${since.mergedAt}: merges before ${iso(lastUpdate)} were not listed`,
    );
  }
  return result.sort((a, b) => time(a.mergedAt) - time(b.mergedAt) || a.number - b.number);
}

/**
 * The commits pushed to the branch after the cursor's commit, oldest first, along its
 * first-parent line (a merged branch's own commits are not pushes of this branch), leaving out
 * those of merged pull requests. The first listing (no commit yet) starts at the cursor's time.
 * A cursor commit no longer on the branch (history rewritten), or too far back, starts the
 * listing over from the tip, with a note, rather than taking a rewritten history for new pushes.
 */
async function pushedAfter(
  since: ChangeCursor,
  limit: number,
  merges: { shas: Set<string>; pulls: MergedPullRequest[] },
  source: MergedChangesSource,
  notes: string[],
): Promise<{ list: PushedCommit[]; sha: string | null; more: boolean }> {
  const from = time(since.mergedAt);
  const commits = new Map<string, BranchCommit>();
  let tip: string | undefined;
  let reached = false;
  await source.eachCommit((commit) => {
    tip ??= commit.sha;
    const before =
      since.sha === null
        ? commit.committedAt !== null && time(commit.committedAt) <= from
        : commit.sha === since.sha;
    if (before) {
      reached = true;
      return false;
    }
    commits.set(commit.sha, commit);
    return commits.size < MAX_COMMITS_WALKED;
  });
  if (tip === undefined) return { list: [], sha: since.sha, more: false };
  if (!reached && since.sha !== null) {
    notes.push(
      `${since.sha.slice(0, 12)} is no longer among the branch's last ${MAX_COMMITS_WALKED} commits: pushes are listed from ${tip.slice(0, 12)} on`,
    );
    return { list: [], sha: tip, more: false };
  }
  const line: BranchCommit[] = [];
  for (let at = commits.get(tip); at !== undefined; at = commits.get(at.parents[0] ?? '')) line.push(at);
  line.reverse();

  const list: PushedCommit[] = [];
  let sha = since.sha;
  for (const commit of line) {
    if (list.length >= limit) return { list, sha, more: true };
    if (!merges.shas.has(commit.sha) && !(await source.partOfMergedPullRequest(commit, merges.pulls))) {
      list.push({ sha: commit.sha, title: commit.title, committedAt: commit.committedAt, url: commit.url });
    }
    sha = commit.sha;
  }
  return { list, sha: line.length > 0 ? sha : tip, more: false };
}
