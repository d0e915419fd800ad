/**
 * Gitea and Forgejo (the same API, `/api/v1`) over fetch: no client library
 * covers both, and the handful of endpoints needed are plain JSON.
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
  toHostError,
  trimSlash,
} from './common.ts';
import { guardConversation } from './conversation-guard.ts';
import { giteaChanges } from './gitea-changes.ts';
import { giteaConversation } from './gitea-conversation.ts';
import type { HostCredentials, PullRequestInput } from './host.ts';
import { HttpFailure, jsonApi } from './http.ts';

/** Gitea ignores the user name when the password is an access token; any name works. */
export const GITEA_GIT_USERNAME = 'docwright';

/** The title prefix Gitea and Forgejo read as "work in progress" (their draft). */
export const GITEA_DRAFT_PREFIX = 'WIP: ';

const PAGE_SIZE = 50;
const MAX_PAGES = 20;

/** `apiUrl` (with `/api/v1` added when missing), else `<origin>[/sub-path]/api/v1`. */
export function giteaApiBase(project: Pick<HostProject, 'repository' | 'apiUrl'>): string {
  if (project.apiUrl) {
    const base = trimSlash(project.apiUrl);
    return /\/api\/v1$/.test(base) ? base : `${base}/api/v1`;
  }
  const { origin, segments } = parseRemoteRepository(project.repository);
  const prefix = segments.slice(0, -2).map(encodeURIComponent).join('/');
  return `${origin}${prefix ? `/${prefix}` : ''}/api/v1`;
}

interface PullRequest {
  number: number;
  html_url: string;
  head?: { ref?: string; repo?: { full_name?: string } | null };
}

interface Label {
  id: number;
  name: string;
}

interface Repository {
  archived?: boolean;
  default_branch?: string;
  permissions?: { admin?: boolean; push?: boolean; pull?: boolean };
}

export function createGiteaHost(
  project: Pick<HostProject, 'repository' | 'apiUrl'>,
  secrets: HostCredentials,
  options: HostOptions = {},
): ApiCodeHost {
  const remote = parseRemoteRepository(project.repository);
  const [owner, repo] = remote.segments.slice(-2) as [string, string];
  const fullName = `${owner}/${repo}`;
  const apiBase = giteaApiBase(project);
  const hostName = `Gitea (${new URL(apiBase).host})`;
  const policy = retryPolicy(options);
  const redact = createRedactor([secrets.token]);
  const repoPath = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;

  const failures = hostFailures({
    host: hostName,
    repository: fullName,
    redact,
    noun: 'pull request',
  });

  const request = jsonApi({
    base: apiBase,
    headers: secrets.token ? { authorization: `token ${secrets.token}` } : {},
    fetch: options.fetch ?? globalThis.fetch,
    policy,
    timeoutMs: timeoutOf(options),
    redact,
    checkUrl: apiAddressCheck(options.allowLinkLocal ?? false),
  });

  /** Every page of a list endpoint (bounded). */
  async function list<T>(path: string, query: Record<string, string | number>, signal?: AbortSignal) {
    const items: T[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const answer = await request<T[]>('GET', path, { query: { ...query, page, limit: PAGE_SIZE }, signal });
      // A host that answers something else than a list has no (more) items.
      const batch = Array.isArray(answer.body) ? answer.body : [];
      items.push(...batch);
      if (batch.length < PAGE_SIZE) break;
    }
    return items;
  }

  async function findOpen(branch: string, signal?: AbortSignal): Promise<PullRequestRef | undefined> {
    const pulls = await list<PullRequest>(`${repoPath}/pulls`, { state: 'open' }, signal);
    const pr = pulls.find(
      (p) =>
        p.head?.ref === branch &&
        (!p.head.repo?.full_name || p.head.repo.full_name.toLowerCase() === fullName.toLowerCase()),
    );
    return pr ? { url: pr.html_url, number: pr.number } : undefined;
  }

  /** Gitea takes label ids; names the repository does not have are skipped with a note. */
  async function labelIds(names: string[], notes: string[], signal?: AbortSignal): Promise<number[]> {
    if (names.length === 0) return [];
    let labels: Label[];
    try {
      labels = await list<Label>(`${repoPath}/labels`, {}, signal);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const failure = toHostError(
        error,
        failures.context('list labels', 'pr-create-failed', 'pr-create-failed'),
      );
      notes.push(`the labels were not added: ${failure.message}`);
      return [];
    }
    const ids: number[] = [];
    for (const name of names) {
      const label =
        labels.find((l) => l.name === name) ??
        labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
      if (label) ids.push(label.id);
      else notes.push(`label "${name}" does not exist in ${fullName}; skipped`);
    }
    return ids;
  }

  /** Labels (by id) and the draft marker travel with the create; skipped labels leave a note. */
  async function create(
    input: PullRequestInput,
    notes: string[],
    signal?: AbortSignal,
  ): Promise<PullRequestRef> {
    const labels = await labelIds(input.labels, notes, signal);
    const title =
      input.draft && !/^(wip:|\[wip\])/i.test(input.title)
        ? `${GITEA_DRAFT_PREFIX}${input.title}`
        : input.title;
    try {
      const answer = await request<PullRequest>('POST', `${repoPath}/pulls`, {
        body: {
          head: input.branch,
          base: input.base,
          title,
          body: input.body,
          ...(labels.length > 0 ? { labels } : {}),
        },
        signal,
      });
      const pr = answer.body;
      return { url: pr.html_url, number: pr.number };
    } catch (error) {
      // The repository answered the lookup, so a 404 here is about a branch.
      if (
        error instanceof HttpFailure &&
        (error.status === 404 || (error.status === 422 && /branch/i.test(error.message)))
      ) {
        throw failures.branchNotFound(input, error);
      }
      throw error;
    }
  }

  async function openPullRequest(input: PullRequestInput, signal?: AbortSignal): Promise<HostPullRequest> {
    const notes: string[] = [];
    const { outcome, ...pr } = await openOrReusePullRequest({
      find: () => findOpen(input.branch, signal),
      create: () => create(input, notes, signal),
      // Gitea's and Forgejo's only 409 here: "pull request already exists for these targets".
      isAlreadyExists: (error) => error instanceof HttpFailure && error.status === 409,
      policy,
      signal,
    });
    return { ...pr, created: outcome === 'created', notes };
  }

  return {
    kind: 'gitea',
    conversation: guardConversation(
      { host: hostName, repository: fullName, redact },
      giteaConversation({ request, repoPath }),
    ),
    ...giteaChanges({ request, repoPath, fullName, host: hostName, redact }),

    async gitRemote() {
      return { url: `${remote.url}.git`, env: {} };
    },

    async gitCredentials(): Promise<GitCredentials | null> {
      return secrets.token ? { username: GITEA_GIT_USERNAME, token: secrets.token } : null;
    },

    ensurePullRequest(input, signal) {
      return failures.pullRequest(input, signal, () => openPullRequest(input, signal));
    },

    defaultBranch(signal) {
      return failures.read(
        signal,
        async () => (await request<Repository>('GET', repoPath, { signal })).body.default_branch || null,
      );
    },

    checkAccess(signal) {
      return failures.access(signal, async () => {
        const data = (await request<Repository>('GET', repoPath, { signal })).body;
        const push = Boolean(data.permissions?.push) && !data.archived;
        return {
          read: true,
          push,
          detail: push
            ? `the token can read and push to ${fullName} on ${hostName}`
            : `the token can read ${fullName} on ${hostName} but not push to it${data.archived ? ' (archived)' : ''}`,
        };
      });
    },
  };
}
