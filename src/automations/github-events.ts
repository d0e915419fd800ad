/**
 * GitHub's webhook events (`X-GitHub-Event`) as code events: `pull_request` closed with
 * `merged: true`, `push` to a branch, and `ping`.
 *
 * `merge_commit_sha` of a merged pull request is the commit its base branch was updated to: the
 * merge commit, the squash commit, or the last of the rebased commits; the push of that merge
 * names the same commit as `after`.
 */
import { z } from 'zod';
import {
  firstIssue,
  type HostEvent,
  ignored,
  labelsBy,
  name,
  number,
  optionalWebUrl,
  pushEvent,
  pushFields,
  sha,
  timestamp,
  title,
  webUrl,
} from './code-events.ts';

const repository = z.object({ html_url: webUrl });

const pullRequest = z.object({
  action: z.string().max(100),
  repository,
  pull_request: z.object({
    number,
    title,
    html_url: optionalWebUrl,
    merged: z.boolean().nullish(),
    merged_at: timestamp,
    merge_commit_sha: sha.nullish(),
    labels: labelsBy('name'),
    head: z.object({ ref: name, sha: sha.nullish() }),
    base: z.object({ ref: name }),
  }),
});

const push = z.object({
  ...pushFields,
  forced: z.boolean().nullish(),
  deleted: z.boolean().nullish(),
  repository,
});

export function githubEvent(event: string, payload: unknown): HostEvent {
  switch (event) {
    case 'ping':
      return { kind: 'ping' };
    case 'pull_request':
      return pullRequestEvent(payload);
    case 'push': {
      const parsed = push.safeParse(payload);
      if (!parsed.success) return ignored(`push: ${firstIssue(parsed.error)}`);
      const p = parsed.data;
      if (p.deleted === true) return ignored('a branch or tag was deleted');
      return pushEvent({
        ...p,
        repositoryUrl: p.repository.html_url,
        // GitHub lists up to 2,048 commits and does not count the others.
        totalCommits: null,
        forced: p.forced ?? null,
      });
    }
    default:
      return ignored(`GitHub event ${event.slice(0, 100)} does not start automations`);
  }
}

/** A `pull_request` payload (GitHub's shape, which Gitea and Forgejo send too). */
export function pullRequestEvent(payload: unknown): HostEvent {
  const parsed = pullRequest.safeParse(payload);
  if (!parsed.success) return ignored(`pull_request: ${firstIssue(parsed.error)}`);
  const { action, repository, pull_request: pull } = parsed.data;
  if (action !== 'closed')
    return ignored(`pull_request ${action.slice(0, 100)} (only merges start automations)`);
  if (pull.merged !== true) return ignored('pull request closed without merging');
  return {
    kind: 'merged-change',
    repositoryUrl: repository.html_url,
    ref: pull.base.ref,
    number: pull.number,
    title: pull.title,
    headRef: pull.head.ref,
    headSha: pull.head.sha ?? null,
    mergeCommitSha: pull.merge_commit_sha ?? null,
    mergedAt: pull.merged_at,
    labels: pull.labels,
    url: pull.html_url,
  };
}
