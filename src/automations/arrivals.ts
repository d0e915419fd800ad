/**
 * Changes as automations receive them (`ChangeArrival`), from a host's webhook event or from the
 * polling fallback's listing, keyed alike (dedupe.ts) so that one change arriving both ways, or
 * twice, runs once.
 */
import type { MergedPullRequest, PushedCommit } from '../git/hosts/index.ts';
import type { ChangeArrival } from './automations.ts';
import type { MergedChangeEvent, PushEvent } from './code-events.ts';
import { pullRequestKeys, pushKeys } from './dedupe.ts';

/** A merged pull/merge request of repository `name` (a webhook's event or a poll's listing). */
export function mergedChangeArrival(
  projectId: string,
  name: string,
  change: MergedChangeEvent | MergedPullRequest,
  landedAt: string | null,
): ChangeArrival {
  return {
    projectId,
    keys: pullRequestKeys(name, change),
    // Neither the event nor the listing gives the commits: they are read from the host when needed.
    facts: {
      repository: name,
      files: null,
      labels: change.labels,
      headRef: change.headRef,
      commits: [],
      commitsComplete: false,
    },
    change: { repository: name, pullRequest: change.number },
    landedAt,
  };
}

/** Commits pushed to repository `name`'s branch (a webhook's push event). */
export function pushArrival(projectId: string, name: string, push: PushEvent): ChangeArrival {
  const shas = push.commits.map((c) => c.sha);
  const created = /^0+$/.test(push.before);
  return {
    projectId,
    keys: pushKeys(name, shas, push.after),
    facts: {
      repository: name,
      files: null,
      labels: [],
      headRef: null,
      commits: push.commits.map((c) => ({ message: c.message })),
      // GitLab lists 20 commits of a push at most (and docwright keeps a bounded number).
      commitsComplete: push.totalCommits <= push.commits.length,
    },
    change: created
      ? { repository: name, commit: push.after }
      : { repository: name, range: `${push.before}..${push.after}` },
    landedAt: null,
  };
}

/** A commit the poll found pushed directly to repository `name`'s branch. */
export function pushedCommitArrival(projectId: string, name: string, commit: PushedCommit): ChangeArrival {
  return {
    projectId,
    keys: pushKeys(name, [commit.sha]),
    // The listing gives the title only: the whole message, with its trailers, is read from the host when needed.
    facts: {
      repository: name,
      files: null,
      labels: [],
      headRef: null,
      commits: [{ message: commit.title }],
      commitsComplete: false,
    },
    change: { repository: name, commit: commit.sha },
    landedAt: commit.committedAt,
  };
}
