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
import type { Thread } from '../doubles/pull-conversations.ts';

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
  /** Its pull requests' conversations: users, comments and the hook payloads they send. */
  conversation: HostedConversation;
  close(): Promise<void>;
}

/** A review comment's place: a file's line and its diff hunk (GitLab sends no hunk). */
export interface ReviewPlace {
  path: string;
  line: number;
  diffHunk: string;
}

export interface HostedConversation {
  /** docwright's own account on the host (the token's user). */
  self: string;
  /** A user of the host with write access to the repository, or read access only. */
  member(login: string, access: 'write' | 'read'): void;
  /**
   * Adds a comment by `login` on pull request `number` (a review comment on a line when `review`
   * is given) and returns what the host's webhook sends for it: event header value and payload.
   */
  comment(
    number: number,
    login: string,
    body: string,
    pull: { url: string; headRef: string },
    review?: ReviewPlace,
  ): { id: number; event: string; payload: Record<string, unknown> };
  /** Opens a pull request from `head` as docwright's account (as a run would): its number and page. */
  openPull(head: string): { number: number; url: string };
  /** The bodies of the comments on `number` by `login` (docwright's replies: `self`), oldest first. */
  commentsBy(login: string, number: number): string[];
  /** Where each of `self`'s replies on `number` went: `pull-request`, or the thread/discussion it answers. */
  replyPlaces(number: number): string[];
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

/** What every host's conversation reads alike from its thread. */
function threadReaders(thread: Thread): Pick<HostedConversation, 'self' | 'commentsBy' | 'replyPlaces'> {
  return {
    self: 'docwright-bot',
    commentsBy: (login, number) => thread.by(login, number).map((c) => c.body),
    replyPlaces: (number) =>
      thread
        .by('docwright-bot', number)
        .map((c) =>
          c.review?.inReplyTo
            ? `thread ${c.review.inReplyTo}`
            : c.discussionId
              ? `discussion ${c.discussionId}`
              : 'pull-request',
        ),
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
      conversation: {
        ...threadReaders(api.repo(name).thread),
        member: (login, access) => void api.users.user(login, access),
        openPull(head) {
          const pull = api.openPull(name, { head, title: 'Docs', user: 'docwright-bot' });
          return { number: pull.number, url: `${api.origin}/${name}/pull/${pull.number}` };
        },
        comment(number, login, body, pull, review) {
          const endpoints = api.conversation(name);
          const user = api.users.user(login);
          const repo = api.repo(name);
          if (review) {
            const added = repo.thread.add({ number, body, user, review: { ...review, inReplyTo: null } });
            return {
              id: added.id,
              event: 'pull_request_review_comment',
              payload: endpoints.reviewCommentPayload(added, common.repository, pull.url, pull.headRef),
            };
          }
          const added = repo.thread.add({ number, body, user });
          return {
            id: added.id,
            event: 'issue_comment',
            payload: endpoints.issueCommentPayload(added, common.repository, pull.url),
          };
        },
      },
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
      conversation: {
        ...threadReaders(api.project(name).thread),
        member: (login, access) => void api.users.user(login, access === 'write' ? '30' : '20'),
        openPull(head) {
          api.project(name).branches.add(head);
          const mr = api.openMergeRequest(name, {
            sourceBranch: head,
            title: 'Docs',
            author: 'docwright-bot',
          });
          return { number: mr.iid, url: `${api.origin}/${name}/-/merge_requests/${mr.iid}` };
        },
        comment(number, login, body, pull, review) {
          const endpoints = api.conversation(name);
          const user = api.users.user(login);
          const thread = api.project(name).thread;
          const added = review
            ? thread.add({
                number,
                body,
                user,
                review: { ...review, inReplyTo: null },
                discussionId: endpoints.newDiscussionId(),
              })
            : thread.add({ number, body, user });
          return {
            id: added.id,
            event: 'Note Hook',
            payload: endpoints.notePayload(added, common.repository, pull.url, pull.headRef),
          };
        },
      },
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
    conversation: {
      ...threadReaders(repo.thread),
      member: (login, access) => void api.users.user(login, access),
      openPull(head) {
        repo.branches.add(head);
        const pull = api.openPull(name, { head, title: 'Docs', user: 'docwright-bot' });
        return { number: pull.number, url: `${api.origin}/${name}/pulls/${pull.number}` };
      },
      comment(number, login, body, pull) {
        const added = repo.thread.add({ number, body, user: api.users.user(login) });
        return {
          id: added.id,
          event: 'issue_comment',
          payload: api.conversation(name).issueCommentPayload(added, common.repository, pull.url),
        };
      },
    },
    close: () => Promise.all([api.close(), git.close()]).then(() => {}),
  };
}
