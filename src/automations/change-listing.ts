/**
 * Merged changes of a project's repositories through their hosts' APIs (src/git/hosts), for the
 * polling fallback and for batched schedules: the repositories automations watch, with the
 * credentials to list them.
 */
import {
  type ChangeCursor,
  type ChangeRef,
  createHost,
  type HostOptions,
  type MergedChanges,
} from '../git/hosts/index.ts';
import type { ProjectService } from '../projects/projects.ts';
import { DOCS_REPOSITORY, type RunChange } from './automation.ts';
import type { ContextRepositories, WatchedRepository } from './repositories.ts';

/** Lists a repository's changes after a cursor (injectable: tests give a double). */
export type ListChanges = (
  repository: WatchedRepository,
  ref: string,
  since: ChangeCursor,
  signal?: AbortSignal,
) => Promise<MergedChanges>;

/** Lists through each repository's host; `hostOptions.allowLinkLocal`: `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`. */
export const listThroughHost =
  (hostOptions: HostOptions = {}): ListChanges =>
  (repository, ref, since, signal) =>
    createHost(
      { host: repository.host, repository: repository.repository, apiUrl: repository.apiUrl },
      { token: repository.token },
      hostOptions,
    ).listMergedChanges({ ref, since, signal });

/** The project's repositories by name, `docs` (its own, with its token) first. */
export async function repositoriesOf(
  projectId: string,
  deps: { projects: ProjectService; contexts: ContextRepositories },
): Promise<WatchedRepository[]> {
  const project = await deps.projects.getRow(projectId);
  if (!project) return [];
  const secrets = await deps.projects.getSecrets(projectId);
  const docs: WatchedRepository = {
    name: DOCS_REPOSITORY,
    repository: project.repository,
    host: project.host as WatchedRepository['host'],
    apiUrl: project.api_url,
    ref: project.ref,
    token: secrets.token,
  };
  return [docs, ...(await deps.contexts.accessFor(projectId))];
}

/** What the filters read of a change through its host: the files it touches, and its commits. */
export interface ChangeDetails {
  files: string[];
  /** Whether `files` is every file it touches (a host lists 300 or 3,000 at most). */
  complete: boolean;
  /** Its commits with their whole messages, oldest first (a pull request's own, no merge commit). */
  commits: { message: string }[];
  /** Whether `commits` is every commit of it. */
  commitsComplete: boolean;
}

/** A change's details through its repository's host; null when the host cannot say. */
export type ChangeDetailsOf = (
  projectId: string,
  change: RunChange,
  options: { files: boolean },
) => Promise<ChangeDetails | null>;

/** Files listed when the `paths` filter needs them (a host's own cap is 3,000). */
const MAX_FILES = 3_000;

/**
 * A change's details through its repository's host (for loop safety and the `paths` filter):
 * no diffs; every file only when `options.files` asks for them.
 */
export function changeDetailsThroughHost(deps: {
  projects: ProjectService;
  contexts: ContextRepositories;
  /** `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`: see git/repository-address.ts. */
  allowLinkLocalRepositories?: boolean | undefined;
}): ChangeDetailsOf {
  return async (projectId, change, options) => {
    const repository = (await repositoriesOf(projectId, deps)).find((r) => r.name === change.repository);
    if (!repository) return null;
    const ref: ChangeRef =
      'pullRequest' in change
        ? { kind: 'pull-request', number: change.pullRequest }
        : 'commit' in change
          ? { kind: 'commit', sha: change.commit }
          : { kind: 'range', base: change.range.split('..')[0]!, head: change.range.split('..')[1]! };
    const found = await createHost(
      { host: repository.host, repository: repository.repository, apiUrl: repository.apiUrl },
      { token: repository.token },
      { allowLinkLocal: deps.allowLinkLocalRepositories },
    ).getChange(ref, {
      limits: { maxFiles: options.files ? MAX_FILES : 100, maxFileDiff: 0, maxTotalDiff: 0 },
    });
    const files = found.files.map((f) => f.path);
    return {
      files,
      complete: found.totalFiles === null || found.totalFiles <= files.length,
      commits: found.commits.map((c) => ({ message: c.message })),
      commitsComplete: found.totalCommits !== null && found.totalCommits <= found.commits.length,
    };
  };
}
