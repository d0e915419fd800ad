/**
 * A local GitLab REST API (v4) with state: projects (addressed by id or by
 * URL-encoded full path), branches, merge requests, members' access levels.
 * GitLab publishes no API description on npm, so this follows the
 * documented shapes: `PRIVATE-TOKEN` or `Authorization: Bearer` auth,
 * `400 {"error":"title is missing"}` for missing required fields, `409` for a
 * second open merge request from a source branch, `{"message": "401 Unauthorized"}`
 * envelopes, and `x-total`/`x-page` pagination headers. Query and body
 * parameters the documentation does not list are recorded in `violations`
 * (GitLab itself ignores them, which would hide a client bug). A project given a real git
 * repository also answers about changes from it (gitlab-changes.ts), and `mergeMergeRequest`
 * merges as GitLab does (merge commit, squash, fast-forward after a rebase).
 *
 *   const gitlab = await startGitLabApi({ tokens: { 'glpat-test': { accessLevel: 30 } } });
 *   gitlab.addProject('group/sub/docs', { branches: ['docwright/abc'] });
 *   // apiUrl: gitlab.origin
 */
import type { GitRepository } from './git-repository.ts';
import {
  type GitLabMergeState,
  type GitLabNote,
  gitLabChangeEndpoints,
  gitlabPage,
} from './gitlab-changes.ts';
import { gitLabCommentEndpoints, gitLabUserJson } from './gitlab-comments.ts';
import {
  authorization,
  type HostAnswer,
  type HostDoubleServer,
  type HostRequest,
  startHostDouble,
} from './host-double.ts';
import { DoubleUsers, Thread } from './pull-conversations.ts';

export type GitLabMergeRequest = GitLabMergeState;

export interface GitLabProject {
  id: number;
  path: string;
  defaultBranch: string;
  branches: Set<string>;
  archived: boolean;
  mergeRequests: GitLabMergeRequest[];
  nextIid: number;
  /** The real repository behind commits, diffs and branches, when the test gave one. */
  git?: GitRepository;
  notes: GitLabNote[];
  /** The merge requests' conversations (gitlab-comments.ts). */
  thread: Thread;
}

export interface GitLabTokenGrant {
  username?: string;
  /** 10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner. */
  accessLevel?: number;
}

export interface GitLabViolation {
  method: string;
  path: string;
  message: string;
}

export interface GitLabApi extends HostDoubleServer {
  violations: GitLabViolation[];
  /** How each authenticated request carried its token. */
  authSchemes: ('private-token' | 'bearer')[];
  /** The instance's users; a user's permission is its access level on the projects (`'30'`: Developer). */
  users: DoubleUsers;
  /** A project's conversation endpoints: its notes' JSON and Note Hook payloads. */
  conversation(path: string): ReturnType<typeof gitLabCommentEndpoints>;
  addProject(
    path: string,
    options?: { branches?: string[]; defaultBranch?: string; archived?: boolean; git?: GitRepository },
  ): GitLabProject;
  project(path: string): GitLabProject;
  /** Opens a merge request directly (as another client would). */
  openMergeRequest(
    path: string,
    mr: Partial<GitLabMergeRequest> & { sourceBranch: string },
  ): GitLabMergeRequest;
  /**
   * Merges a merge request of a git-backed project: a merge commit, a squashed commit
   * (fast-forward), or its commits rebased and fast-forwarded (no commit of its own).
   */
  mergeMergeRequest(path: string, iid: number, method?: 'merge' | 'squash' | 'rebase'): GitLabMergeRequest;
  closeMergeRequest(path: string, iid: number): GitLabMergeRequest;
}

const LIST_PARAMS = new Set([
  'state',
  'order_by',
  'sort',
  'milestone',
  'view',
  'labels',
  'with_labels_details',
  'with_merge_status_recheck',
  'created_after',
  'created_before',
  'updated_after',
  'updated_before',
  'scope',
  'author_id',
  'author_username',
  'assignee_id',
  'reviewer_id',
  'reviewer_username',
  'my_reaction_emoji',
  'source_branch',
  'target_branch',
  'search',
  'in',
  'wip',
  'not',
  'environment',
  'deployed_before',
  'deployed_after',
  'approved',
  'merge_user_id',
  'merge_user_username',
  'iids[]',
  'page',
  'per_page',
]);

const CREATE_PARAMS = new Set([
  'source_branch',
  'target_branch',
  'title',
  'allow_collaboration',
  'approvals_before_merge',
  'allow_maintainer_to_push',
  'assignee_id',
  'assignee_ids',
  'description',
  'labels',
  'merge_after',
  'milestone_id',
  'remove_source_branch',
  'reviewer_ids',
  'squash',
  'target_project_id',
]);

const MESSAGES: Record<number, string> = {
  400: '400 Bad request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  409: '409 Conflict',
  429: 'Retry later',
  500: '500 Internal Server Error',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
};

const errorBody = (status: number) => ({ message: MESSAGES[status] ?? `${status} Error` });

export async function startGitLabApi(
  options: { tokens?: Record<string, GitLabTokenGrant> } = {},
): Promise<GitLabApi> {
  const projects = new Map<string, GitLabProject>();
  const tokens = new Map(Object.entries(options.tokens ?? {}));
  const violations: GitLabViolation[] = [];
  const authSchemes: GitLabApi['authSchemes'] = [];
  let nextId = 100;
  let origin = '';

  function findProject(id: string): GitLabProject | undefined {
    // `:id` is the numeric id or the URL-encoded full path (`group%2Fdocs`); a raw `/` would be another route.
    const decoded = decodeURIComponent(id);
    if (/^\d+$/.test(decoded)) return [...projects.values()].find((p) => p.id === Number(decoded));
    return projects.get(decoded.toLowerCase());
  }

  function mrJson(project: GitLabProject, mr: GitLabMergeRequest) {
    const draft = /^(draft:|\[draft\]|\(draft\))/i.test(mr.title);
    return {
      id: mr.id,
      iid: mr.iid,
      project_id: project.id,
      source_project_id: project.id,
      target_project_id: project.id,
      title: mr.title,
      description: mr.description,
      state: mr.state,
      source_branch: mr.sourceBranch,
      target_branch: mr.targetBranch,
      draft,
      work_in_progress: draft,
      labels: mr.labels,
      author: {
        id: 1,
        username: mr.author,
        name: mr.author,
        state: 'active',
        web_url: `${origin}/${mr.author}`,
      },
      web_url: `${origin}/${project.path}/-/merge_requests/${mr.iid}`,
      created_at: mr.createdAt,
      updated_at: mr.updatedAt,
      merged_at: mr.mergedAt,
      closed_at: mr.state === 'closed' ? mr.updatedAt : null,
      sha: mr.headSha ?? project.git?.resolve(`refs/heads/${mr.sourceBranch}`) ?? null,
      merge_commit_sha: mr.mergeCommitSha,
      squash_commit_sha: mr.squashCommitSha,
    };
  }

  const now = (project: GitLabProject) => (project.git ? project.git.now() : new Date()).toISOString();

  function newMergeRequest(
    project: GitLabProject,
    mr: Partial<GitLabMergeRequest> & { sourceBranch: string; author: string },
  ): GitLabMergeRequest {
    const at = now(project);
    return {
      id: nextId++,
      iid: project.nextIid++,
      title: 'Opened elsewhere',
      description: null,
      targetBranch: project.defaultBranch,
      state: 'opened',
      labels: [],
      createdAt: at,
      updatedAt: at,
      mergedAt: null,
      mergeCommitSha: null,
      squashCommitSha: null,
      headSha: null,
      baseSha: null,
      landed: [],
      ...mr,
    };
  }

  const endpoints = new WeakMap<GitLabProject, ReturnType<typeof gitLabChangeEndpoints>>();
  function changesOf(project: GitLabProject) {
    const git = project.git;
    if (!git) return undefined;
    let found = endpoints.get(project);
    if (!found) {
      found = gitLabChangeEndpoints({
        origin,
        path: project.path,
        projectId: project.id,
        git,
        mergeRequests: project.mergeRequests,
        notes: project.notes,
        nextId: () => nextId++,
        now: () => now(project),
        mrJson: (mr) => mrJson(project, mr),
      });
      endpoints.set(project, found);
    }
    return found;
  }

  const users = new DoubleUsers();
  const conversations = new WeakMap<GitLabProject, ReturnType<typeof gitLabCommentEndpoints>>();
  function conversationOf(project: GitLabProject) {
    let found = conversations.get(project);
    if (!found) {
      found = gitLabCommentEndpoints({
        origin,
        projectId: project.id,
        path: project.path,
        users,
        thread: project.thread,
        hasMergeRequest: (iid) => project.mergeRequests.some((mr) => mr.iid === iid),
      });
      conversations.set(project, found);
    }
    return found;
  }

  const hasBranch = (project: GitLabProject, ref: string) =>
    project.branches.has(ref) || Boolean(project.git?.resolve(`refs/heads/${ref}`));

  function authenticate(request: HostRequest): GitLabTokenGrant | undefined {
    const privateToken = request.headers['private-token'];
    if (typeof privateToken === 'string') {
      authSchemes.push('private-token');
      return tokens.get(privateToken);
    }
    const auth = authorization(request);
    if (auth?.scheme === 'bearer') {
      authSchemes.push('bearer');
      return tokens.get(auth.credential);
    }
    return undefined;
  }

  function handle(request: HostRequest): HostAnswer {
    const violation = (message: string) =>
      violations.push({ method: request.method, path: request.path, message });
    if (request.path === '/api/v4/user' && request.method === 'GET') {
      const me = authenticate(request);
      if (!me) return { status: 401, body: errorBody(401) };
      return { status: 200, body: gitLabUserJson(origin, users.user(me.username ?? 'docwright-bot')) };
    }
    const match = /^\/api\/v4\/projects\/([^/]+)(\/.+)?$/.exec(request.path);
    if (!match) {
      violation('not an endpoint of the double');
      return { status: 404, body: { error: '404 Not Found' } };
    }
    const grant = authenticate(request);
    if (!grant) return { status: 401, body: errorBody(401) };
    const project = findProject(match[1] ?? '');
    if (!project) return { status: 404, body: { message: '404 Project Not Found' } };
    const level = grant.accessLevel ?? 30;
    const resource = match[2] ?? '';
    // A git-backed project's notes stay the change endpoints' (commentOnSource).
    if (!(project.git && request.method === 'POST' && /^\/merge_requests\/\d+\/notes$/.test(resource))) {
      const answer = conversationOf(project).answer(
        resource,
        request,
        grant.username ?? 'docwright-bot',
        violation,
      );
      if (answer) return answer;
    }
    if (match[2] !== undefined && match[2] !== '/merge_requests') {
      const answer = changesOf(project)?.answer(
        match[2],
        request,
        grant.username ?? 'docwright-bot',
        violation,
      );
      if (answer) return answer;
      violation('not an endpoint of the double');
      return { status: 404, body: { error: '404 Not Found' } };
    }

    if (!match[2] && request.method === 'GET') {
      return {
        status: 200,
        body: {
          id: project.id,
          path: project.path.split('/').at(-1),
          path_with_namespace: project.path,
          web_url: `${origin}/${project.path}`,
          http_url_to_repo: `${origin}/${project.path}.git`,
          default_branch: project.defaultBranch,
          archived: project.archived,
          permissions: { project_access: { access_level: level, notification_level: 3 }, group_access: null },
        },
      };
    }

    if (match[2] && request.method === 'GET') {
      for (const name of request.query.keys()) {
        if (!LIST_PARAMS.has(name)) violation(`unknown query parameter ${name}`);
      }
      const state = request.query.get('state') ?? 'all';
      if (!['opened', 'closed', 'locked', 'merged', 'all'].includes(state)) {
        return { status: 400, body: { error: 'state does not have a valid value' } };
      }
      const source = request.query.get('source_branch');
      const target = request.query.get('target_branch');
      const updatedAfter = request.query.get('updated_after');
      const byUpdate = request.query.get('order_by') === 'updated_at';
      const ascending = request.query.get('sort') === 'asc';
      const key = (mr: GitLabMergeRequest) => (byUpdate ? Date.parse(mr.updatedAt) : mr.iid);
      const list = project.mergeRequests
        .filter((mr) => state === 'all' || mr.state === state)
        .filter((mr) => !source || mr.sourceBranch === source)
        .filter((mr) => !target || mr.targetBranch === target)
        .filter((mr) => !updatedAfter || Date.parse(mr.updatedAt) >= Date.parse(updatedAfter))
        .sort((a, b) => (ascending ? key(a) - key(b) : key(b) - key(a)));
      const { items, headers } = gitlabPage(request, list);
      return { status: 200, headers, body: items.map((mr) => mrJson(project, mr)) };
    }

    if (match[2] && request.method === 'POST') {
      if (!String(request.headers['content-type'] ?? '').includes('application/json')) {
        violation(`content-type ${request.headers['content-type']} instead of JSON`);
      }
      const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<
        string,
        unknown
      >;
      for (const name of Object.keys(body)) {
        if (!CREATE_PARAMS.has(name)) violation(`unknown body parameter ${name}`);
      }
      const missing = ['source_branch', 'target_branch', 'title'].filter(
        (name) => typeof body[name] !== 'string' || body[name] === '',
      );
      if (missing.length > 0) {
        return { status: 400, body: { error: missing.map((name) => `${name} is missing`).join(', ') } };
      }
      if (body.labels !== undefined && typeof body.labels !== 'string' && !Array.isArray(body.labels)) {
        return { status: 400, body: { error: 'labels is invalid' } };
      }
      if (level < 30) return { status: 403, body: errorBody(403) };
      const source = String(body.source_branch);
      const target = String(body.target_branch);
      if (!hasBranch(project, source)) {
        return { status: 422, body: { message: [`Source branch "${source}" does not exist`] } };
      }
      if (!hasBranch(project, target)) {
        return { status: 422, body: { message: [`Target branch "${target}" does not exist`] } };
      }
      const open = project.mergeRequests.find(
        (mr) => mr.state === 'opened' && mr.sourceBranch === source && mr.targetBranch === target,
      );
      if (open) {
        return {
          status: 409,
          body: {
            message: [`Another open merge request already exists for this source branch: !${open.iid}`],
          },
        };
      }
      const labels =
        typeof body.labels === 'string'
          ? body.labels
              .split(',')
              .map((l) => l.trim())
              .filter(Boolean)
          : ((body.labels as string[] | undefined) ?? []);
      const mr = newMergeRequest(project, {
        title: String(body.title),
        description: typeof body.description === 'string' ? body.description : null,
        sourceBranch: source,
        targetBranch: target,
        labels,
        author: grant.username ?? 'docwright-bot',
      });
      project.mergeRequests.push(mr);
      return { status: 201, body: mrJson(project, mr) };
    }

    violation(`${request.method} is not handled`);
    return { status: 405, body: { message: '405 Method Not Allowed' } };
  }

  const server = await startHostDouble(handle, { errorBody });
  origin = server.origin;

  const api: GitLabApi = {
    ...server,
    violations,
    authSchemes,
    users,
    conversation: (path) => conversationOf(api.project(path)),
    addProject(path, projectOptions = {}) {
      const defaultBranch = projectOptions.defaultBranch ?? 'main';
      const project: GitLabProject = {
        id: nextId++,
        path,
        defaultBranch,
        branches: new Set([defaultBranch, ...(projectOptions.branches ?? [])]),
        archived: projectOptions.archived ?? false,
        mergeRequests: [],
        nextIid: 1,
        ...(projectOptions.git ? { git: projectOptions.git } : {}),
        notes: [],
        thread: new Thread(),
      };
      projects.set(path.toLowerCase(), project);
      return project;
    },
    project(path) {
      const project = projects.get(path.toLowerCase());
      if (!project) throw new Error(`no project ${path} in the double`);
      return project;
    },
    openMergeRequest(path, mr) {
      const project = api.project(path);
      const created = newMergeRequest(project, { author: 'someone', ...mr });
      project.mergeRequests.push(created);
      return created;
    },
    mergeMergeRequest(path, iid, method = 'merge') {
      const project = api.project(path);
      const mr = project.mergeRequests.find((m) => m.iid === iid);
      const git = project.git;
      if (!mr || !git || mr.state !== 'opened') throw new Error(`cannot merge !${iid} of ${path}`);
      const targetTip = git.head(mr.targetBranch);
      mr.headSha = git.head(mr.sourceBranch);
      mr.baseSha = git.mergeBase(targetTip, mr.headSha);
      const at = now(project);
      const message =
        method === 'squash'
          ? mr.title
          : `Merge branch '${mr.sourceBranch}' into '${mr.targetBranch}'\n\n${mr.title}`;
      mr.landed = git.merge(mr.targetBranch, mr.sourceBranch, method, message);
      if (method === 'rebase') {
        // GitLab rebases the source branch onto the target, then fast-forwards the target to it.
        mr.headSha = mr.landed.at(-1) ?? mr.headSha;
        mr.baseSha = targetTip;
        git.git(['update-ref', `refs/heads/${mr.sourceBranch}`, mr.headSha]);
      }
      Object.assign(mr, {
        state: 'merged',
        mergedAt: at,
        updatedAt: at,
        mergeCommitSha: method === 'merge' ? (mr.landed.at(-1) ?? null) : null,
        squashCommitSha: method === 'squash' ? (mr.landed.at(-1) ?? null) : null,
      });
      return mr;
    },
    closeMergeRequest(path, iid) {
      const project = api.project(path);
      const mr = project.mergeRequests.find((m) => m.iid === iid);
      if (!mr) throw new Error(`no merge request !${iid} in ${path}`);
      Object.assign(mr, {
        state: 'closed',
        updatedAt: now(project),
        headSha: project.git?.resolve(`refs/heads/${mr.sourceBranch}`) ?? null,
      });
      return mr;
    },
  };
  return api;
}
