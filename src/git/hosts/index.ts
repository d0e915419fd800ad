/**
 * The code host of a project, chosen by `project.host`: one implementation
 * per file in this folder, all behind the `CodeHost` interface.
 */
import type { ProjectSecrets, ProjectView } from '../../projects/projects.ts';
import type { HostOptions, HostProject } from './common.ts';
import { createGiteaHost } from './gitea.ts';
import { createGitHubHost } from './github.ts';
import { createGitLabHost } from './gitlab.ts';
import type { CodeHost, PullRequestInput } from './host.ts';
import { createLocalHost } from './local.ts';

export type { ApiCodeHost, GitCredentials, HostOptions, HostProject, HostPullRequest } from './common.ts';
export { GITEA_GIT_USERNAME } from './gitea.ts';
export { GITHUB_GIT_USERNAME } from './github.ts';
export { GITLAB_GIT_USERNAME } from './gitlab.ts';
export * from './host.ts';
export type { RetryPolicy } from './http.ts';

export function createHost(
  project: HostProject,
  secrets: ProjectSecrets,
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

/** The pull request of a run, with draft and labels from the project's settings. */
export function pullRequestInput(
  project: Pick<ProjectView, 'settings'>,
  pr: { branch: string; base: string; title: string; body: string },
): PullRequestInput {
  return { ...pr, draft: project.settings.draft, labels: [...project.settings.labels] };
}
