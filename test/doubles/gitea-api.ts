/**
 * A local Gitea/Forgejo REST API (`/api/v1`) with state: repositories,
 * branches, labels (by id), pull requests. No API description is published
 * on npm, so this follows Gitea's documented shapes: `Authorization: token …`,
 * `CreatePullRequestOption` (`head`, `base`, `title` required; `labels` as
 * label ids), 422 binding errors, 409 "pull request already exists for these
 * targets", `{"message", "url"}` error envelopes and `page`/`limit` paging.
 * Query and body fields Gitea does not document are recorded in `violations`.
 *
 *   const gitea = await startGiteaApi({ tokens: { 'gitea-token': { push: true } } });
 *   gitea.addRepo('octo/docs', { branches: ['docwright/abc'], labels: ['docs'] });
 *   // apiUrl: `${gitea.origin}/api/v1`
 */
import {
  authorization,
  type HostAnswer,
  type HostDoubleServer,
  type HostRequest,
  paginate,
  startHostDouble,
} from './host-double.ts';

export interface GiteaPull {
  number: number;
  title: string;
  body: string;
  head: string;
  base: string;
  state: 'open' | 'closed';
  labels: number[];
  user: string;
}

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
  addRepo(
    fullName: string,
    options?: { branches?: string[]; defaultBranch?: string; labels?: string[]; archived?: boolean },
  ): GiteaRepo;
  repo(fullName: string): GiteaRepo;
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
    const branch = (ref: string) => ({
      label: ref,
      ref,
      sha: '0'.repeat(40),
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
      head: branch(pull.head),
      base: branch(pull.base),
    };
  }

  function handle(request: HostRequest): HostAnswer {
    const violation = (text: string) =>
      violations.push({ method: request.method, path: request.path, message: text });
    const match = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)(\/pulls|\/labels)?$/.exec(request.path);
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
      const list = repo.pulls
        .filter((p) => state === 'all' || p.state === state)
        .sort((a, b) => b.number - a.number);
      return {
        status: 200,
        headers: { 'x-total-count': String(list.length) },
        body: paginate(list, page, limit).map((p) => pullJson(repo, p)),
      };
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
      if (!repo.branches.has(head) || !repo.branches.has(base)) return { status: 404, body: errorBody(404) };
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
      const pull: GiteaPull = {
        number: repo.nextNumber++,
        title: String(body.title),
        body: typeof body.body === 'string' ? body.body : '',
        head,
        base,
        state: 'open',
        labels: labels as number[],
        user: grant.login ?? 'docwright-bot',
      };
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
      };
      repos.set(fullName.toLowerCase(), repo);
      return repo;
    },
    repo(fullName) {
      const repo = repos.get(fullName.toLowerCase());
      if (!repo) throw new Error(`no repository ${fullName} in the double`);
      return repo;
    },
  };
  return api;
}
