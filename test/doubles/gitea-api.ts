/**
 * A local Gitea/Forgejo REST API (`/api/v1`) with state: repositories,
 * branches, labels (by id), pull requests. No API description is published
 * on npm, so this follows Gitea's documented shapes: `Authorization: token …`,
 * `CreatePullRequestOption` (`head`, `base`, `title` required; `labels` as
 * label ids), 422 binding errors, 409 "pull request already exists for these
 * targets", `{"message", "url"}` error envelopes and `page`/`limit` paging.
 * Query and body fields Gitea does not document are recorded in `violations`. A repository
 * given a real git repository also answers about changes from it (gitea-changes.ts), and
 * `mergePull` merges in Gitea's styles (merge commit, squash, rebase).
 *
 *   const gitea = await startGiteaApi({ tokens: { 'gitea-token': { push: true } } });
 *   gitea.addRepo('octo/docs', { branches: ['docwright/abc'], labels: ['docs'] });
 *   // apiUrl: `${gitea.origin}/api/v1`
 */
import type { GitRepository } from './git-repository.ts';
import { type GiteaComment, type GiteaPullState, giteaChangeEndpoints, giteaPage } from './gitea-changes.ts';
import { giteaCommentEndpoints, giteaUserJson } from './gitea-comments.ts';
import {
  authorization,
  type HostAnswer,
  type HostDoubleServer,
  type HostRequest,
  paginate,
  startHostDouble,
} from './host-double.ts';
import { DoubleUsers, Thread } from './pull-conversations.ts';

export type GiteaPull = GiteaPullState;

export interface GiteaRepo {
  id: number;
  owner: string;
  name: string;
  defaultBranch: string;
  branches: Set<string>;
  archived: boolean;
  labels: { id: number; name: string; color: string }[];
  pulls: GiteaPull[];
  nextNumber: number;
  /** The real repository behind commits, diffs and branches, when the test gave one. */
  git?: GitRepository;
  comments: GiteaComment[];
  /** The pull requests' conversations (gitea-comments.ts). */
  thread: Thread;
}

export interface GiteaTokenGrant {
  login?: string;
  push?: boolean;
}

export interface GiteaViolation {
  method: string;
  path: string;
  message: string;
}

export interface GiteaApi extends HostDoubleServer {
  violations: GiteaViolation[];
  /** The host's users and their permission on repositories (`owner`, `admin`, `write`, `read`). */
  users: DoubleUsers;
  /** A repository's conversation endpoints: its comments' JSON and webhook payloads. */
  conversation(fullName: string): ReturnType<typeof giteaCommentEndpoints>;
  addRepo(
    fullName: string,
    options?: {
      branches?: string[];
      defaultBranch?: string;
      labels?: string[];
      archived?: boolean;
      git?: GitRepository;
    },
  ): GiteaRepo;
  repo(fullName: string): GiteaRepo;
  /** Opens a pull request directly (as another client would). */
  openPull(fullName: string, pull: Partial<GiteaPull> & { head: string }): GiteaPull;
  /** Merges a pull request of a git-backed repository as Gitea's merge styles do. */
  mergePull(fullName: string, number: number, method?: 'merge' | 'squash' | 'rebase'): GiteaPull;
  closePull(fullName: string, number: number): GiteaPull;
}

const SWAGGER = '/api/swagger';
const LIST_PULLS_PARAMS = new Set([
  'state',
  'sort',
  'milestone',
  'labels',
  'poster',
  'page',
  'limit',
  'base_branch',
]);
const LIST_LABELS_PARAMS = new Set(['page', 'limit']);
const CREATE_PULL_FIELDS = new Set([
  'assignee',
  'assignees',
  'base',
  'body',
  'due_date',
  'head',
  'labels',
  'milestone',
  'reviewers',
  'team_reviewers',
  'title',
]);

export async function startGiteaApi(
  options: { tokens?: Record<string, GiteaTokenGrant> } = {},
): Promise<GiteaApi> {
  const repos = new Map<string, GiteaRepo>();
  const tokens = new Map(Object.entries(options.tokens ?? {}));
  const violations: GiteaViolation[] = [];
  let nextId = 1;
  let origin = '';
  const message = (text: string) => ({ message: text, url: `${origin}${SWAGGER}` });

  const errorBody = (status: number) =>
    message(
      (
        {
          401: 'token is required',
          403: 'Forbidden',
          404: "The target couldn't be found.",
          409: 'Conflict',
          422: 'Unprocessable Entity',
        } as Record<number, string>
      )[status] ?? (status >= 500 ? 'Internal Server Error' : 'Error'),
    );

  function pullJson(repo: GiteaRepo, pull: GiteaPull) {
    const branch = (ref: string, frozen: string | null = null) => ({
      label: ref,
      ref,
      sha: frozen ?? repo.git?.resolve(`refs/heads/${ref}`) ?? '0'.repeat(40),
      repo_id: repo.id,
      repo: { id: repo.id, name: repo.name, full_name: `${repo.owner}/${repo.name}` },
    });
    return {
      id: repo.id * 1000 + pull.number,
      number: pull.number,
      url: `${origin}/${repo.owner}/${repo.name}/pulls/${pull.number}`,
      html_url: `${origin}/${repo.owner}/${repo.name}/pulls/${pull.number}`,
      title: pull.title,
      body: pull.body,
      state: pull.state,
      draft: /^(wip:|\[wip\])/i.test(pull.title),
      user: { login: pull.user },
      labels: pull.labels.map((id) => repo.labels.find((l) => l.id === id)),
      head: branch(pull.head, pull.headSha),
      base: branch(pull.base),
      merged: pull.merged,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: pull.state === 'closed' ? pull.updatedAt : null,
    };
  }

  const now = (repo: GiteaRepo) => (repo.git ? repo.git.now() : new Date()).toISOString();

  function newPull(repo: GiteaRepo, pull: Partial<GiteaPull> & { head: string; user: string }): GiteaPull {
    const at = now(repo);
    return {
      number: repo.nextNumber++,
      title: 'Opened elsewhere',
      body: '',
      base: repo.defaultBranch,
      state: 'open',
      labels: [],
      createdAt: at,
      updatedAt: at,
      merged: false,
      mergedAt: null,
      mergeCommitSha: null,
      headSha: null,
      baseSha: null,
      ...pull,
    };
  }

  const endpoints = new WeakMap<GiteaRepo, ReturnType<typeof giteaChangeEndpoints>>();
  function changesOf(repo: GiteaRepo) {
    const git = repo.git;
    if (!git) return undefined;
    let found = endpoints.get(repo);
    if (!found) {
      found = giteaChangeEndpoints({
        origin,
        owner: repo.owner,
        name: repo.name,
        repoId: repo.id,
        git,
        pulls: repo.pulls,
        comments: repo.comments,
        nextId: () => nextId++,
        now: () => now(repo),
        pullJson: (pull) => pullJson(repo, pull),
      });
      endpoints.set(repo, found);
    }
    return found;
  }

  const users = new DoubleUsers();
  const conversations = new WeakMap<GiteaRepo, ReturnType<typeof giteaCommentEndpoints>>();
  function conversationOf(repo: GiteaRepo) {
    let found = conversations.get(repo);
    if (!found) {
      found = giteaCommentEndpoints({
        origin,
        owner: repo.owner,
        name: repo.name,
        users,
        thread: repo.thread,
        hasPull: (number) => repo.pulls.some((p) => p.number === number),
      });
      conversations.set(repo, found);
    }
    return found;
  }

  const hasBranch = (repo: GiteaRepo, ref: string) =>
    repo.branches.has(ref) || Boolean(repo.git?.resolve(`refs/heads/${ref}`));

  function handle(request: HostRequest): HostAnswer {
    const violation = (text: string) =>
      violations.push({ method: request.method, path: request.path, message: text });
    if (request.path === '/api/v1/user' && request.method === 'GET') {
      const me = authorization(request);
      const grant = me?.scheme === 'token' ? tokens.get(me.credential) : undefined;
      if (!grant) return { status: 401, body: errorBody(401) };
      return { status: 200, body: giteaUserJson(origin, users.user(grant.login ?? 'docwright-bot')) };
    }
    const match = /^\/api\/v1\/repos\/([^/]+)\/([^/]+?)(\/.+)?$/.exec(request.path);
    if (!match) {
      violation('not an endpoint of the double');
      return { status: 404, body: errorBody(404) };
    }
    const auth = authorization(request);
    if (auth?.scheme !== 'token') {
      if (auth) violation(`Authorization scheme ${auth.scheme}, not token`);
      return { status: 401, body: errorBody(401) };
    }
    const grant = tokens.get(auth.credential);
    if (!grant) return { status: 401, body: message('user does not exist [uid: 0, name: ]') };
    const fullName = `${decodeURIComponent(match[1] ?? '')}/${decodeURIComponent(match[2] ?? '')}`;
    const repo = repos.get(fullName.toLowerCase());
    if (!repo) return { status: 404, body: errorBody(404) };
    const resource = match[3];
    // A git-backed repository's comments on pull requests stay the change endpoints' (commentOnSource).
    if (resource && !(repo.git && request.method === 'POST' && /^\/issues\/\d+\/comments$/.test(resource))) {
      const answer = conversationOf(repo).answer(
        resource,
        request,
        grant.login ?? 'docwright-bot',
        violation,
      );
      if (answer) return answer;
    }
    if (resource !== undefined && resource !== '/pulls' && resource !== '/labels') {
      const answer = changesOf(repo)?.answer(resource, request, grant.login ?? 'docwright-bot', violation);
      if (answer) return answer;
      violation('not an endpoint of the double');
      return { status: 404, body: errorBody(404) };
    }
    const page = Number(request.query.get('page') ?? 1);
    const limit = Math.min(50, Number(request.query.get('limit') ?? 30));

    if (!resource && request.method === 'GET') {
      return {
        status: 200,
        body: {
          id: repo.id,
          name: repo.name,
          full_name: fullName,
          owner: { login: repo.owner },
          html_url: `${origin}/${fullName}`,
          clone_url: `${origin}/${fullName}.git`,
          default_branch: repo.defaultBranch,
          archived: repo.archived,
          permissions: { admin: false, push: grant.push ?? false, pull: true },
        },
      };
    }

    if (resource === '/labels' && request.method === 'GET') {
      for (const name of request.query.keys()) {
        if (!LIST_LABELS_PARAMS.has(name)) violation(`unknown query parameter ${name}`);
      }
      return {
        status: 200,
        headers: { 'x-total-count': String(repo.labels.length) },
        body: paginate(repo.labels, page, limit).map((l) => ({ ...l, description: '', exclusive: false })),
      };
    }

    if (resource === '/pulls' && request.method === 'GET') {
      for (const name of request.query.keys()) {
        if (!LIST_PULLS_PARAMS.has(name)) violation(`unknown query parameter ${name}`);
      }
      const state = request.query.get('state') ?? 'open';
      if (!['open', 'closed', 'all'].includes(state)) return { status: 422, body: message('invalid state') };
      const byUpdate = request.query.get('sort') === 'recentupdate';
      const list = repo.pulls
        .filter((p) => state === 'all' || p.state === state)
        .sort((a, b) => (byUpdate ? Date.parse(b.updatedAt) - Date.parse(a.updatedAt) : b.number - a.number));
      const { items, headers } = giteaPage(request, origin, list);
      return { status: 200, headers, body: items.map((p) => pullJson(repo, p)) };
    }

    if (resource === '/pulls' && request.method === 'POST') {
      if (!String(request.headers['content-type'] ?? '').includes('application/json')) {
        violation(`content-type ${request.headers['content-type']} instead of JSON`);
      }
      const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<
        string,
        unknown
      >;
      for (const name of Object.keys(body)) {
        if (!CREATE_PULL_FIELDS.has(name)) violation(`unknown body field ${name}`);
      }
      // Gitea's binding errors: 422 with one entry per failed field.
      const missing = (['head', 'base', 'title'] as const).filter(
        (name) => typeof body[name] !== 'string' || body[name] === '',
      );
      if (missing.length > 0) {
        return {
          status: 422,
          body: missing.map((name) => ({
            fieldNames: [name[0]!.toUpperCase() + name.slice(1)],
            classification: 'RequiredError',
            message: 'Required',
          })),
        };
      }
      const labels = body.labels ?? [];
      if (!Array.isArray(labels) || !labels.every((l) => Number.isInteger(l))) {
        return {
          status: 422,
          body: [
            {
              fieldNames: ['Labels'],
              classification: 'DeserializationError',
              message: 'labels must be label ids',
            },
          ],
        };
      }
      if (!grant.push)
        return { status: 403, body: message('user should have permission to write to the target branch') };
      const head = String(body.head);
      const base = String(body.base);
      if (!hasBranch(repo, head) || !hasBranch(repo, base)) return { status: 404, body: errorBody(404) };
      const unknown = labels.filter((id) => !repo.labels.some((l) => l.id === id));
      if (unknown.length > 0)
        return { status: 422, body: message(`label ids ${unknown.join(', ')} do not exist`) };
      const open = repo.pulls.find((p) => p.state === 'open' && p.head === head && p.base === base);
      if (open) {
        return {
          status: 409,
          body: message(
            `pull request already exists for these targets [id: ${open.number}, issue_id: ${open.number}, head_repo_id: ${repo.id}, base_repo_id: ${repo.id}, head_branch: ${head}, base_branch: ${base}]`,
          ),
        };
      }
      const pull = newPull(repo, {
        title: String(body.title),
        body: typeof body.body === 'string' ? body.body : '',
        head,
        base,
        labels: labels as number[],
        user: grant.login ?? 'docwright-bot',
      });
      repo.pulls.push(pull);
      return { status: 201, body: pullJson(repo, pull) };
    }

    violation(`${request.method} ${resource ?? ''} is not handled`);
    return { status: 405, body: message('Method Not Allowed') };
  }

  const server = await startHostDouble(handle, { errorBody: (status) => errorBody(status) });
  origin = server.origin;

  const api: GiteaApi = {
    ...server,
    violations,
    users,
    conversation: (fullName) => conversationOf(api.repo(fullName)),
    addRepo(fullName, repoOptions = {}) {
      const [owner, name] = fullName.split('/') as [string, string];
      const defaultBranch = repoOptions.defaultBranch ?? 'main';
      const repo: GiteaRepo = {
        id: nextId++,
        owner,
        name,
        defaultBranch,
        branches: new Set([defaultBranch, ...(repoOptions.branches ?? [])]),
        archived: repoOptions.archived ?? false,
        labels: (repoOptions.labels ?? []).map((label) => ({ id: nextId++, name: label, color: '00aabb' })),
        pulls: [],
        nextNumber: 1,
        ...(repoOptions.git ? { git: repoOptions.git } : {}),
        comments: [],
        thread: new Thread(),
      };
      repos.set(fullName.toLowerCase(), repo);
      return repo;
    },
    repo(fullName) {
      const repo = repos.get(fullName.toLowerCase());
      if (!repo) throw new Error(`no repository ${fullName} in the double`);
      return repo;
    },
    openPull(fullName, pull) {
      const repo = api.repo(fullName);
      const created = newPull(repo, { user: 'someone', ...pull });
      repo.pulls.push(created);
      return created;
    },
    mergePull(fullName, number, method = 'merge') {
      const repo = api.repo(fullName);
      const pull = repo.pulls.find((p) => p.number === number);
      const git = repo.git;
      if (!pull || !git || pull.state !== 'open') throw new Error(`cannot merge #${number} of ${fullName}`);
      pull.headSha = git.head(pull.head);
      pull.baseSha = git.mergeBase(git.head(pull.base), pull.headSha);
      const at = now(repo);
      const message =
        method === 'squash'
          ? `${pull.title} (#${number})`
          : `Merge pull request '${pull.title}' (#${number}) from ${pull.head} into ${pull.base}`;
      const landed = git.merge(pull.base, pull.head, method, message);
      Object.assign(pull, {
        state: 'closed',
        merged: true,
        mergedAt: at,
        updatedAt: at,
        mergeCommitSha: landed.at(-1) ?? null,
      });
      return pull;
    },
    closePull(fullName, number) {
      const repo = api.repo(fullName);
      const pull = repo.pulls.find((p) => p.number === number);
      if (!pull) throw new Error(`no pull request #${number} in ${fullName}`);
      Object.assign(pull, {
        state: 'closed',
        updatedAt: now(repo),
        headSha: repo.git?.resolve(`refs/heads/${pull.head}`) ?? null,
      });
      return pull;
    },
  };
  return api;
}
