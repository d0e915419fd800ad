/**
 * A repository on a code host, as the end-to-end tests need it: a real git smart-HTTP server
 * that requires the token (with the host's Basic user name) and the host's API double,
 * wired so that a push creates the branch the API then knows, as on the real hosts.
 */
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { type GiteaApi, startGiteaApi } from '../doubles/gitea-api.ts';
import { type GitHubApi, startGitHubApi } from '../doubles/github-api.ts';
import { type GitLabApi, startGitLabApi } from '../doubles/gitlab-api.ts';
import type { HostDoubleServer } from '../doubles/host-double.ts';

export type HostKind = 'github' | 'gitlab' | 'gitea';
export const HOST_KINDS: readonly HostKind[] = ['github', 'gitlab', 'gitea'];

/** A pull or merge request, the same shape whichever host holds it. */
export interface HostedPull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  labels: string[];
  /** GitHub's flag, or GitLab's/Gitea's title prefix. */
  draft: boolean;
}

export interface HostedRepository {
  kind: HostKind;
  /** `owner/name` (GitLab: `group/name`). */
  name: string;
  token: string;
  /** The web URL to give a project as `repository`. */
  repository: string;
  apiUrl: string;
  git: GitHttpServer;
  api: HostDoubleServer;
  pulls(): HostedPull[];
  /** Requests the double found not to match the host's API description. */
  violations(): unknown[];
  /** A pattern the job's `prLink` must match for `pull`. */
  pullUrl(pull: HostedPull): RegExp;
  close(): Promise<void>;
}

/** The Basic user name each host's git server insists on (Gitea takes any). */
const GIT_USERS: Record<HostKind, string | undefined> = {
  github: 'x-access-token',
  gitlab: 'oauth2',
  gitea: undefined,
};

/** The token each host's doubles accept (a test can plant it in a repository). */
export const HOST_TOKENS: Record<HostKind, string> = {
  github: 'ghp_e2eSecretToken0123456789abcdefABCD',
  gitlab: 'glpat-e2eSecretToken_0123456789',
  gitea: 'e2e0gitea0secret0token0123456789abcdef01',
};

/** Makes `branches.has` also see branches pushed to the git server. */
function followPushes(branches: Set<string>, git: GitHttpServer, name: string): void {
  const known = branches.has.bind(branches);
  branches.has = (branch: string) => {
    if (known(branch)) return true;
    try {
      git.git(name, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`);
      return true;
    } catch {
      return false;
    }
  };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Starts a git server and the `kind` API double, and creates `name` holding `files` (a map of
 * path → content, or a directory to copy) on `main`, with a `docs` label where labels exist.
 */
export async function startHostedRepository(
  kind: HostKind,
  files: Record<string, string> | string,
  name = kind === 'gitlab' ? 'group/docs' : 'octo/docs',
): Promise<HostedRepository> {
  const token = HOST_TOKENS[kind];
  const git = await startGitHttpServer({ tokens: { [token]: 'write' }, username: GIT_USERS[kind] });
  await git.createRepository(name, files);
  const common = {
    kind,
    name,
    token,
    repository: `${git.baseUrl}/${name}`,
    git,
  };
  if (kind === 'github') {
    const api: GitHubApi = await startGitHubApi({ tokens: { [token]: { push: true } } });
    followPushes(api.addRepo(name, { branches: ['main'] }).branches, git, name);
    return {
      ...common,
      api,
      apiUrl: api.baseUrl,
      pulls: () =>
        api.repo(name).pulls.map((p) => ({
          number: p.number,
          head: p.head,
          base: p.base,
          title: p.title,
          body: p.body ?? '',
          labels: p.labels,
          draft: p.draft,
        })),
      violations: () => api.violations,
      pullUrl: (pull) => new RegExp(`/${escapeRegExp(name)}/pull/${pull.number}$`),
      close: () => Promise.all([api.close(), git.close()]).then(() => {}),
    };
  }
  if (kind === 'gitlab') {
    const api: GitLabApi = await startGitLabApi({ tokens: { [token]: { accessLevel: 30 } } });
    followPushes(api.addProject(name).branches, git, name);
    return {
      ...common,
      api,
      apiUrl: `${api.origin}/api/v4`,
      pulls: () =>
        api.project(name).mergeRequests.map((mr) => ({
          number: mr.iid,
          head: mr.sourceBranch,
          base: mr.targetBranch,
          title: mr.title.replace(/^Draft: /, ''),
          body: mr.description ?? '',
          labels: mr.labels,
          draft: mr.title.startsWith('Draft: '),
        })),
      violations: () => api.violations,
      pullUrl: (pull) => new RegExp(`/${escapeRegExp(name)}/-/merge_requests/${pull.number}$`),
      close: () => Promise.all([api.close(), git.close()]).then(() => {}),
    };
  }
  const api: GiteaApi = await startGiteaApi({ tokens: { [token]: { push: true } } });
  const repo = api.addRepo(name, { labels: ['docs'] });
  followPushes(repo.branches, git, name);
  return {
    ...common,
    api,
    apiUrl: `${api.origin}/api/v1`,
    pulls: () =>
      repo.pulls.map((p) => ({
        number: p.number,
        head: p.head,
        base: p.base,
        title: p.title.replace(/^WIP: /, ''),
        body: p.body,
        labels: p.labels.map((id) => repo.labels.find((l) => l.id === id)?.name ?? `#${id}`),
        draft: p.title.startsWith('WIP: '),
      })),
    violations: () => api.violations,
    pullUrl: (pull) => new RegExp(`/${escapeRegExp(name)}/pulls/${pull.number}$`),
    close: () => Promise.all([api.close(), git.close()]).then(() => {}),
  };
}
