/**
 * GitLab (gitlab.com and self-managed) merge requests through
 * `@gitbeaker/rest`, with a requester of our own so that requests go through
 * the injected fetch, honour the caller's abort signal and are retried by the
 * shared policy (Retry-After included) instead of gitbeaker's fixed loop.
 */
import {
  createRequesterFn,
  type RequesterType,
  type RequestOptions,
  type ResourceOptions,
  type ResponseBodyTypes,
} from '@gitbeaker/requester-utils';
import { MergeRequests, Projects } from '@gitbeaker/rest';
import type { ProjectSecrets } from '../../projects/projects.ts';
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
  trimSlash,
} from './common.ts';
import type { PullRequestInput } from './host.ts';
import { HttpFailure, sendJson, withRetry } from './http.ts';

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

/** The gitbeaker `host` (the instance root, without `/api/v4`): `apiUrl`, else the repository's origin. */
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
  permissions?: {
    project_access?: { access_level: number } | null;
    group_access?: { access_level: number } | null;
  };
}

export function createGitLabHost(
  project: Pick<HostProject, 'repository' | 'apiUrl'>,
  secrets: ProjectSecrets,
  options: HostOptions = {},
): ApiCodeHost {
  const remote = parseRemoteRepository(project.repository);
  const path = remote.segments.join('/');
  const host = gitlabApiHost(project);
  const hostName = `GitLab (${new URL(host).host})`;
  const policy = retryPolicy(options);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const secretValues = [secrets.token];

  const failures = hostFailures({
    host: hostName,
    repository: path,
    secrets: secretValues,
    noun: 'merge request',
    missing: `project ${path} does not exist or these credentials cannot see it`,
  });

  /** gitbeaker's request plumbing (auth headers, decamelised query) ending in our fetch. */
  function requesterFn(signal?: AbortSignal): (resourceOptions: ResourceOptions) => RequesterType {
    return createRequesterFn(
      async (_resource, requestOptions) => requestOptions,
      async (endpoint, raw) => {
        const request = (raw ?? {}) as RequestOptions;
        const prefix = request.prefixUrl ?? `${host}/api/v4/`;
        const url = new URL(endpoint, prefix.endsWith('/') ? prefix : `${prefix}/`);
        if (request.searchParams) url.search = request.searchParams;
        const answer = await sendJson(
          fetchImpl,
          url,
          {
            method: request.method ?? 'GET',
            headers: { accept: 'application/json', ...request.headers },
            body: typeof request.body === 'string' ? request.body : undefined,
          },
          { signal, timeoutMs: policy.timeoutMs, secrets: secretValues },
        );
        return { body: answer.body as ResponseBodyTypes, headers: answer.headers, status: answer.status };
      },
    );
  }

  function resources(signal?: AbortSignal) {
    const base = { host, requesterFn: requesterFn(signal), rateLimits: {}, queryTimeout: null };
    const config = secrets.token ? { ...base, token: secrets.token } : base;
    return { mergeRequests: new MergeRequests(config), projects: new Projects(config) };
  }

  const call = <T>(signal: AbortSignal | undefined, run: (api: ReturnType<typeof resources>) => Promise<T>) =>
    withRetry(() => run(resources(signal)), policy, signal);

  async function findOpen(branch: string, signal?: AbortSignal): Promise<PullRequestRef | undefined> {
    const list = (await call(signal, (api) =>
      api.mergeRequests.all({
        projectId: path,
        sourceBranch: branch,
        state: 'opened',
        perPage: 100,
        maxPages: 1,
      }),
    )) as unknown as MergeRequest[];
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
      const mr = (await call(signal, (api) =>
        api.mergeRequests.create(path, input.branch, input.base, title, {
          description: input.body,
          ...(input.labels.length > 0 ? { labels: input.labels.join(',') } : {}),
        }),
      )) as unknown as MergeRequest;
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

    async gitRemote() {
      return { url: `${remote.url}.git`, env: {} };
    },

    async gitCredentials(): Promise<GitCredentials | null> {
      return secrets.token ? { username: GITLAB_GIT_USERNAME, token: secrets.token } : null;
    },

    ensurePullRequest(input, signal) {
      return failures.pullRequest(input, signal, () => openMergeRequest(input, signal));
    },

    checkAccess(signal) {
      return failures.access(signal, async () => {
        const data = (await call(signal, (api) => api.projects.show(path))) as unknown as Project;
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
