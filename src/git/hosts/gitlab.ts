/**
 * GitLab (gitlab.com and self-managed) merge requests over fetch, like Gitea: the three
 * endpoints needed (look up, create, read the project) are plain JSON, and the shared layer
 * (http.ts) gives them the injected fetch, the caller's abort signal, timeouts and retries
 * with Retry-After.
 */

import { createRedactor } from '../../redact.ts';
import { apiAddressCheck } from '../repository-address.ts';
import {
  type ApiCodeHost,
  type GitCredentials,
  type HostOptions,
  type HostProject,
  type HostPullRequest,
  hostFailures,
  openOrReusePullRequest,
  type PullRequestRef,
  parseRemoteRepository,
  retryPolicy,
  timeoutOf,
  trimSlash,
} from './common.ts';
import { guardConversation } from './conversation-guard.ts';
import { gitLabChanges } from './gitlab-changes.ts';
import { gitLabConversation } from './gitlab-conversation.ts';
import type { HostCredentials, PullRequestInput } from './host.ts';
import { HttpFailure, jsonApi } from './http.ts';

/** The user name git sends with a GitLab access token over HTTPS. */
export const GITLAB_GIT_USERNAME = 'oauth2';

/** Developer: the lowest access level that may push branches and open merge requests. */
const DEVELOPER_ACCESS = 30;

const ACCESS_LEVELS: Record<number, string> = {
  10: 'guest',
  15: 'planner',
  20: 'reporter',
  30: 'developer',
  40: 'maintainer',
  50: 'owner',
};

/** The instance root (without `/api/v4`): `apiUrl`, else the repository's origin. */
export function gitlabApiHost(project: Pick<HostProject, 'repository' | 'apiUrl'>): string {
  if (project.apiUrl) return trimSlash(project.apiUrl).replace(/\/api\/v4$/, '');
  return parseRemoteRepository(project.repository).origin;
}

interface MergeRequest {
  iid: number;
  web_url: string;
  source_branch: string;
  project_id?: number;
  source_project_id?: number;
}

interface Project {
  archived?: boolean;
  default_branch?: string | null;
  permissions?: {
    project_access?: { access_level: number } | null;
    group_access?: { access_level: number } | null;
  };
}

export function createGitLabHost(
  project: Pick<HostProject, 'repository' | 'apiUrl'>,
  secrets: HostCredentials,
  options: HostOptions = {},
): ApiCodeHost {
  const remote = parseRemoteRepository(project.repository);
  const path = remote.segments.join('/');
  const host = gitlabApiHost(project);
  const hostName = `GitLab (${new URL(host).host})`;
  const policy = retryPolicy(options);
  const redact = createRedactor([secrets.token]);

  const failures = hostFailures({
    host: hostName,
    repository: path,
    redact,
    noun: 'merge request',
    missing: `project ${path} does not exist or these credentials cannot see it`,
  });

  const request = jsonApi({
    base: `${host}/api/v4/projects/${encodeURIComponent(path)}`,
    headers: secrets.token ? { 'private-token': secrets.token } : {},
    fetch: options.fetch ?? globalThis.fetch,
    policy,
    timeoutMs: timeoutOf(options),
    redact,
    checkUrl: apiAddressCheck(options.allowLinkLocal ?? false),
  });

  /** The instance's API (`/api/v4`): who the token is. */
  const instance = jsonApi({
    base: `${host}/api/v4`,
    headers: secrets.token ? { 'private-token': secrets.token } : {},
    fetch: options.fetch ?? globalThis.fetch,
    policy,
    timeoutMs: timeoutOf(options),
    redact,
    checkUrl: apiAddressCheck(options.allowLinkLocal ?? false),
  });

  async function findOpen(branch: string, signal?: AbortSignal): Promise<PullRequestRef | undefined> {
    const { body } = await request<MergeRequest[]>('GET', '/merge_requests', {
      query: { source_branch: branch, state: 'opened', per_page: 100 },
      signal,
    });
    const list = Array.isArray(body) ? body : [];
    const mr = list.find(
      (m) =>
        m.source_branch === branch &&
        (m.source_project_id === undefined ||
          m.project_id === undefined ||
          m.source_project_id === m.project_id),
    );
    return mr ? { url: mr.web_url, number: mr.iid } : undefined;
  }

  /** Labels and the draft marker travel with the create: nothing is left to do after it. */
  async function create(input: PullRequestInput, signal?: AbortSignal): Promise<PullRequestRef> {
    const title =
      input.draft && !/^(draft:|\[draft\]|\(draft\))/i.test(input.title)
        ? `Draft: ${input.title}`
        : input.title;
    try {
      const { body } = await request<MergeRequest>('POST', '/merge_requests', {
        body: {
          source_branch: input.branch,
          target_branch: input.base,
          title,
          description: input.body,
          ...(input.labels.length > 0 ? { labels: input.labels.join(',') } : {}),
        },
        signal,
      });
      const mr = body;
      return { url: mr.web_url, number: mr.iid };
    } catch (error) {
      // GitLab answers 422 (or 400, by version) when the source or target branch does not exist.
      if (
        error instanceof HttpFailure &&
        (error.status === 422 || error.status === 400) &&
        /branch/i.test(error.message)
      ) {
        throw failures.branchNotFound(input, error);
      }
      throw error;
    }
  }

  async function openMergeRequest(input: PullRequestInput, signal?: AbortSignal): Promise<HostPullRequest> {
    const { outcome, ...mr } = await openOrReusePullRequest({
      find: () => findOpen(input.branch, signal),
      create: () => create(input, signal),
      // GitLab's only 409 here: "Another open merge request already exists for this source branch".
      isAlreadyExists: (error) => error instanceof HttpFailure && error.status === 409,
      policy,
      signal,
    });
    return { ...mr, created: outcome === 'created', notes: [] };
  }

  return {
    kind: 'gitlab',
    ...gitLabChanges({ request, path, webUrl: remote.url, host: hostName, redact }),
    conversation: guardConversation(
      { host: hostName, repository: path, redact },
      gitLabConversation({ request, instance, webUrl: remote.url }),
    ),

    async gitRemote() {
      return { url: `${remote.url}.git`, env: {} };
    },

    async gitCredentials(): Promise<GitCredentials | null> {
      return secrets.token ? { username: GITLAB_GIT_USERNAME, token: secrets.token } : null;
    },

    ensurePullRequest(input, signal) {
      return failures.pullRequest(input, signal, () => openMergeRequest(input, signal));
    },

    defaultBranch(signal) {
      return failures.read(
        signal,
        async () => (await request<Project>('GET', '', { signal })).body.default_branch || null,
      );
    },

    checkAccess(signal) {
      return failures.access(signal, async () => {
        const data = (await request<Project>('GET', '', { signal })).body;
        const level = Math.max(
          data.permissions?.project_access?.access_level ?? 0,
          data.permissions?.group_access?.access_level ?? 0,
        );
        const role = ACCESS_LEVELS[level] ?? (level === 0 ? 'no membership' : `access level ${level}`);
        const push = level >= DEVELOPER_ACCESS && !data.archived;
        return {
          read: true,
          push,
          detail: push
            ? `the token can read and push to ${path} on ${hostName} (${role})`
            : `the token can read ${path} on ${hostName} but not push to it (${data.archived ? 'archived' : role}; developer or above is needed)`,
        };
      });
    },
  };
}
