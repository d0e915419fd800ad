/**
 * Gitea's and Forgejo's webhook events (`X-Gitea-Event`, `X-Forgejo-Event`) as code events:
 * `pull_request` closed with `pull_request.merged: true` (GitHub's payload shape), and `push` to
 * a branch. Neither has a ping: their "Test delivery" sends a push.
 *
 * A push lists its commits newest first and at most `[ui] FEED_MAX_COMMIT_NUM` of them (5 by
 * default); `total_commits` counts them all.
 */
import { z } from 'zod';
import { count, firstIssue, type HostEvent, ignored, pushEvent, pushFields, webUrl } from './code-events.ts';
import { pullRequestEvent } from './github-events.ts';

const push = z.object({ ...pushFields, total_commits: count, repository: z.object({ html_url: webUrl }) });

export function giteaEvent(event: string, payload: unknown): HostEvent {
  switch (event) {
    case 'pull_request':
      return pullRequestEvent(payload);
    case 'push': {
      const parsed = push.safeParse(payload);
      if (!parsed.success) return ignored(`push: ${firstIssue(parsed.error)}`);
      const p = parsed.data;
      return pushEvent({
        ...p,
        repositoryUrl: p.repository.html_url,
        totalCommits: p.total_commits,
        forced: null,
      });
    }
    default:
      return ignored(`Gitea event ${event.slice(0, 100)} does not start automations`);
  }
}
