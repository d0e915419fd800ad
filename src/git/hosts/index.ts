/**
 * The code host of a project, chosen by `project.host`: one implementation
 * per file in this folder, all behind the `CodeHost` interface.
 */
import { gitCredentialEnv } from '../credentials.ts';
import { checkRemoteAddress } from '../repository-address.ts';
import type { ApiCodeHost, HostOptions, HostProject } from './common.ts';
import { createGiteaHost } from './gitea.ts';
import { createGitHubHost } from './github.ts';
import { createGitLabHost } from './gitlab.ts';
import type { CodeHost, HostCredentials, PullRequestInput } from './host.ts';
import { createLocalHost } from './local.ts';

export type { RetryPolicy } from '../../retry.ts';
export { repositoryKey, sameRepository } from '../repository-url.ts';
export type {
  Change,
  ChangeComment,
  ChangeCommit,
  ChangeCursor,
  ChangeFile,
  ChangeFileStatus,
  ChangeKind,
  ChangeLimits,
  ChangeRef,
  GetChangeOptions,
  MergedChanges,
  MergedChangesQuery,
  MergedPullRequest,
  PushedCommit,
} from './change.ts';
export { DEFAULT_CHANGE_LIMITS, DEFAULT_LISTING_LIMIT, parseCursor, startCursor } from './change.ts';
export { type ChangeUrl, findChangeUrls, MAX_CHANGE_URLS, parseChangeUrl } from './change-url.ts';
export type { ApiCodeHost, GitCredentials, HostOptions, HostProject, HostPullRequest } from './common.ts';
export {
  type HostUser,
  hasConversation,
  type PullRequestComment,
  type PullRequestConversation,
  type ReplyTarget,
} from './conversation.ts';
export { guardConversation } from './conversation-guard.ts';
export { GITEA_GIT_USERNAME } from './gitea.ts';
export { GITHUB_GIT_USERNAME } from './github.ts';
export { GITLAB_GIT_USERNAME } from './gitlab.ts';
export * from './host.ts';

export function createHost(
  project: HostProject,
  secrets: HostCredentials,
  options: HostOptions = {},
): CodeHost {
  switch (project.host) {
    case 'github':
      return createGitHubHost(project, secrets, options);
    case 'gitlab':
      return createGitLabHost(project, secrets, options);
    case 'gitea':
      return createGiteaHost(project, secrets, options);
    case 'local':
      return createLocalHost(project);
  }
}

/**
 * The pull request of a run, with labels from the project's settings and draft from the job's
 * request when it chose (`draft` not null), else from the project.
 */
export function pullRequestInput(
  project: { settings: { draft: boolean; labels: readonly string[] } },
  pr: { branch: string; base: string; title: string; body: string; draft?: boolean | null },
): PullRequestInput {
  return { ...pr, draft: pr.draft ?? project.settings.draft, labels: [...project.settings.labels] };
}

/** What git needs to reach a project's repository. */
export interface GitAccess {
  url: string;
  /** The environment for every git command that talks to `url`; credentials ride here, never in the URL. */
  env: Record<string, string>;
  /** The token git authenticates with (for redactors: an App installation token is minted, not stored), or null. */
  token: string | null;
}

const hasGitCredentials = (host: CodeHost): host is ApiCodeHost => 'gitCredentials' in host;

/** How `gitAccess` judges the remote's address. */
export interface GitAccessOptions {
  /** Allow a remote on a link-local or cloud metadata address (`DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1`). */
  allowLinkLocal?: boolean | undefined;
}

/**
 * The remote of `host` and the environment that carries its credentials to git. The remote's
 * name is resolved first: one on a link-local or metadata address fails with
 * `repository-address-refused` before git contacts it (git/repository-address.ts).
 */
export async function gitAccess(
  host: CodeHost,
  signal?: AbortSignal,
  options: GitAccessOptions = {},
): Promise<GitAccess> {
  const remote = await host.gitRemote(signal);
  await checkRemoteAddress(remote.url, options.allowLinkLocal ?? false);
  const credentials = hasGitCredentials(host) ? await host.gitCredentials(signal) : null;
  return {
    url: remote.url,
    env: { ...remote.env, ...(credentials ? gitCredentialEnv(remote.url, credentials) : {}) },
    token: credentials?.token ?? null,
  };
}
