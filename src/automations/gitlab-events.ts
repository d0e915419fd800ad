/**
 * GitLab's webhook events (`X-Gitlab-Event`) as code events: `Merge Request Hook` with action
 * `merge`, and `Push Hook` to a branch. A system hook (`System Hook`) carries the same payloads,
 * told apart by `object_kind`. GitLab has no ping: its "Test" button sends a sample of the
 * chosen event.
 *
 * A merge request's `merge_commit_sha` is null for a fast-forward merge (then the branch moves to
 * the request's last commit) and the squash commit is `squash_commit_sha` where GitLab sends it;
 * the push payload lists at most the 20 newest commits and counts them all in
 * `total_commits_count`.
 */
import { z } from 'zod';
import {
  count,
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

const project = z.object({ web_url: webUrl });

const mergeRequest = z.object({
  project,
  labels: labelsBy('title'),
  object_attributes: z.object({
    iid: number,
    title,
    url: optionalWebUrl,
    state: z.string().max(100).nullish(),
    action: z.string().max(100).nullish(),
    source_branch: name,
    target_branch: name,
    merge_commit_sha: sha.nullish(),
    squash_commit_sha: sha.nullish(),
    merged_at: timestamp,
    last_commit: z.object({ id: sha }).nullish(),
  }),
});

const push = z.object({ ...pushFields, total_commits_count: count, project });

export function gitlabEvent(event: string, payload: unknown): HostEvent {
  const kind = event === 'System Hook' ? systemHookKind(payload) : event;
  switch (kind) {
    case 'Merge Request Hook': {
      const parsed = mergeRequest.safeParse(payload);
      if (!parsed.success) return ignored(`Merge Request Hook: ${firstIssue(parsed.error)}`);
      const { project, labels, object_attributes: mr } = parsed.data;
      // Older GitLab sent no action: then the state says it.
      const merged = mr.action ? mr.action === 'merge' : mr.state === 'merged';
      if (!merged) {
        return ignored(
          `merge request ${(mr.action ?? mr.state ?? 'event').slice(0, 100)} (only merges start automations)`,
        );
      }
      return {
        kind: 'merged-change',
        repositoryUrl: project.web_url,
        ref: mr.target_branch,
        number: mr.iid,
        title: mr.title,
        headRef: mr.source_branch,
        headSha: mr.last_commit?.id ?? null,
        mergeCommitSha: mr.merge_commit_sha ?? mr.squash_commit_sha ?? null,
        mergedAt: mr.merged_at,
        labels,
        url: mr.url,
      };
    }
    case 'Push Hook': {
      const parsed = push.safeParse(payload);
      if (!parsed.success) return ignored(`Push Hook: ${firstIssue(parsed.error)}`);
      const p = parsed.data;
      return pushEvent({
        ...p,
        repositoryUrl: p.project.web_url,
        totalCommits: p.total_commits_count,
        forced: null,
      });
    }
    default:
      return ignored(`GitLab event ${kind.slice(0, 100)} does not start automations`);
  }
}

/** The project hook a system hook's payload stands for, by its `object_kind`. */
function systemHookKind(payload: unknown): string {
  const objectKind =
    typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>).object_kind : null;
  if (objectKind === 'merge_request') return 'Merge Request Hook';
  if (objectKind === 'push') return 'Push Hook';
  return `System Hook (${typeof objectKind === 'string' ? objectKind.slice(0, 100) : 'unknown kind'})`;
}
