/**
 * A local GitHub REST API (github.com at `/`, or GitHub Enterprise Server at
 * `/api/v3`) with state: repositories and their branches, pull requests,
 * labels, tokens, and a GitHub App whose installation tokens are minted only
 * for a JWT signed with the app's key.
 *
 * Every request is checked against GitHub's published description
 * (`@octokit/openapi`, api.github.com.json, trimmed to the operations docwright
 * uses by scripts/github-openapi-subset.ts into test/data/github-openapi-subset.json):
 * the path and method must be one of those operations, path and query parameters
 * must match their schemas, and the body must match the operation's request body
 * schema. A request that does not is answered 400 and recorded in `violations`. Each
 * successful answer of the double is checked against the operation's published answer schema
 * (see `closed`), and a mismatch is recorded there too.
 *
 * A repository given a real git repository (`git`, see git-repository.ts) also answers about
 * changes from it (github-changes.ts): pull requests in full with their files and commits,
 * commits, comparisons, a branch's commits, the pull requests of a commit, issue comments; and
 * `mergePull` merges as GitHub's button does (merge commit, squash, rebase).
 *
 *   const github = await startGitHubApi({ tokens: { 'ghp_test': { push: true } } });
 *   github.addRepo('octo/docs', { branches: ['main', 'docwright/abc'] });
 *   // createHost({ host: 'github', repository: 'https://github.com/octo/docs', apiUrl: github.baseUrl }, …)
 *   assert.deepEqual(github.violations, []);
 */
import { type KeyObject, randomBytes, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { GitRepository } from './git-repository.ts';
import { changeEndpoints, type GitHubComment, type GitHubPullState, githubPage } from './github-changes.ts';
import { gitHubCommentEndpoints, gitHubUserJson } from './github-comments.ts';
import {
  authorization,
  type HostAnswer,
  type HostDoubleServer,
  type HostRequest,
  startHostDouble,
} from './host-double.ts';
import { DoubleUsers, Thread } from './pull-conversations.ts';

// ajv-formats is CommonJS; its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

// ---------------------------------------------------------------------------
// The published API description

type Json = Record<string, unknown>;

interface Operation {
  template: string;
  method: string;
  operationId: string;
  parameters: Json[];
  requestBody?: Json;
}

interface Route {
  template: string;
  pattern: RegExp;
  names: string[];
  literals: number;
}

export interface Violation {
  method: string;
  path: string;
  operation?: string;
  message: string;
}

let description: { spec: Json; routes: Route[] } | undefined;

function loadDescription() {
  if (description) return description;
  const file = path.resolve(import.meta.dirname, '../data/github-openapi-subset.json');
  const spec = JSON.parse(readFileSync(file, 'utf8')) as Json;
  const routes: Route[] = Object.keys(spec.paths as Json).map((template) => {
    const names: string[] = [];
    const source = template
      .split('/')
      .map((segment) =>
        segment.replace(/\{([^}]+)\}|[^{}]+/g, (part, name: string | undefined) => {
          if (name === undefined) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
          names.push(name);
          return '([^/]+)';
        }),
      )
      .join('/');
    const literals = template.split('/').filter((s) => s !== '' && !s.includes('{')).length;
    return { template, pattern: new RegExp(`^${source}$`), names, literals };
  });
  description = { spec, routes };
  return description;
}

const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
addFormats(ajv);
const validators = new Map<string, ValidateFunction>();

/**
 * A published answer schema made "closed": every object lists the only fields it may have
 * (`additionalProperties: false`) and none is required. An answer of the double then passes only
 * when each field it sends is one GitHub documents, with GitHub's type — so a client that reads
 * only what the double sends reads real fields — while the double need not fill in the hundred
 * fields of a repository nobody reads. OpenAPI 3.0's `nullable` becomes JSON Schema's `null` type.
 */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (node === null || typeof node !== 'object') return node;
  const { nullable, required: _required, oneOf, ...rest } = node as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(rest)) {
    out[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as Json).map(([name, v]) => [name, closed(v)]))
        : closed(value);
  }
  // Only one alternative fits a closed object anyway; anyOf does not fail an answer two would fit.
  if (oneOf) out.anyOf = closed(oneOf);
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  if (nullable !== true) return out;
  if (typeof out.type === 'string' && !out.$ref) {
    return {
      ...out,
      type: [out.type, 'null'],
      ...(Array.isArray(out.enum) ? { enum: [...out.enum, null] } : {}),
    };
  }
  return { anyOf: [out, { type: 'null' }] };
}

let answers: { validate(operationId: string, body: unknown): string | undefined } | undefined;

/** Checks the double's answers against the published answer schemas (closed, see `closed`). */
function answerSchemas() {
  if (answers) return answers;
  const { spec } = loadDescription();
  const operations: Json = {};
  for (const item of Object.values(spec.paths as Json)) {
    for (const raw of Object.values(item as Json)) {
      const op = raw as Json;
      const response = op.response as Json | undefined;
      if (typeof op.operationId === 'string' && response)
        operations[op.operationId] = closed(response.schema);
    }
  }
  const components = closed(((spec.components as Json)?.schemas as Json) ?? {});
  ajv.addSchema({ $id: 'github-answers', components: { schemas: components }, operations }, 'github-answers');
  answers = {
    validate(operationId, body) {
      if (operations[operationId] === undefined) return undefined;
      const key = `answer:${operationId}`;
      let validate = validators.get(key);
      if (!validate) {
        validate = ajv.compile({
          $ref: `github-answers#/operations/${operationId.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        });
        validators.set(key, validate);
      }
      return validate(body) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'answer' });
    },
  };
  return answers;
}

/** What the published description rejects in an answer of the double for `operationId`, if anything. */
export const checkAnswerAgainstDescription = (operationId: string, body: unknown): string | undefined =>
  answerSchemas().validate(operationId, body);

function validator(key: string, schema: unknown): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema as Json);
    validators.set(key, validate);
  }
  return validate;
}

/** A query or path value as its schema's type (they all arrive as strings). */
function coerce(value: string, schema: Json): unknown {
  const type = schema.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  if (type === 'array') return value.split(',');
  return value;
}

/** Finds the operation for a request and lists what about it the description rejects. */
export function checkAgainstDescription(
  method: string,
  path: string,
  query: URLSearchParams,
  body: unknown,
  contentType: string | undefined,
): { operation?: Operation; params: Record<string, string>; problems: string[] } {
  const { spec, routes } = loadDescription();
  const candidates = routes
    .map((route) => ({ route, match: route.pattern.exec(path) }))
    .filter((c) => c.match !== null)
    .sort((a, b) => b.route.literals - a.route.literals);
  const verb = method.toLowerCase();
  const found = candidates[0]?.route;
  const chosen = candidates.find((c) => ((spec.paths as Json)[c.route.template] as Json)[verb] !== undefined);
  if (!chosen) {
    const problem = found
      ? `${method} is not an operation of ${found.template}`
      : `no operation in the API description matches ${path}`;
    return { params: {}, problems: [problem] };
  }
  const { route, match } = chosen;
  const item = (spec.paths as Json)[route.template] as Json;
  const raw = item[verb] as Json;
  // The subset has its references inlined already.
  const parameters = [...((item.parameters as Json[]) ?? []), ...((raw.parameters as Json[]) ?? [])];
  const operation: Operation = {
    template: route.template,
    method: verb,
    operationId: String(raw.operationId),
    parameters,
    requestBody: raw.requestBody as Json | undefined,
  };
  const problems: string[] = [];
  const params: Record<string, string> = {};
  route.names.forEach((name, i) => {
    params[name] = decodeURIComponent(match?.[i + 1] ?? '');
  });

  const check = (key: string, schema: Json | undefined, value: unknown, where: string) => {
    if (!schema) return;
    const validate = validator(key, schema);
    if (!validate(value)) problems.push(`${where}: ${ajv.errorsText(validate.errors, { dataVar: where })}`);
  };

  for (const parameter of parameters) {
    const name = String(parameter.name);
    const schema = parameter.schema as Json | undefined;
    const key = `${operation.operationId}:${parameter.in}:${name}`;
    if (parameter.in === 'path') {
      const value = params[name];
      if (value === undefined || value === '') problems.push(`path parameter ${name} is missing`);
      else check(key, schema, coerce(value, schema ?? {}), `path parameter ${name}`);
    } else if (parameter.in === 'query') {
      const value = query.get(name);
      if (value === null) {
        if (parameter.required) problems.push(`query parameter ${name} is required`);
      } else check(key, schema, coerce(value, schema ?? {}), `query parameter ${name}`);
    }
  }
  const declared = new Set(parameters.filter((p) => p.in === 'query').map((p) => String(p.name)));
  for (const name of query.keys()) {
    if (!declared.has(name)) problems.push(`query parameter ${name} is not in the description`);
  }

  const requestBody = operation.requestBody;
  if (body === undefined) {
    if (requestBody?.required) problems.push('the request body is required');
  } else if (!requestBody) {
    problems.push('this operation takes no request body');
  } else {
    const content = requestBody.content as Json | undefined;
    const json = content?.['application/json'] as Json | undefined;
    if (!json) problems.push('this operation takes no JSON body');
    else {
      if (!contentType?.includes('application/json'))
        problems.push(`content-type is ${contentType}, not JSON`);
      check(`${operation.operationId}:body`, json.schema as Json, body, 'body');
    }
  }
  return { operation, params, problems };
}

// ---------------------------------------------------------------------------
// The double

export type GitHubPull = GitHubPullState;

export interface GitHubRepo {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  defaultBranch: string;
  branches: Set<string>;
  pulls: GitHubPull[];
  labels: Map<string, { id: number; name: string; color: string }>;
  /** Issues and pull requests share numbers. */
  nextNumber: number;
  /** False: like private repositories on free plans, draft pull requests are refused. */
  draftsSupported: boolean;
  /** The real repository behind its commits, diffs and branches, when the test gave one. */
  git?: GitRepository;
  comments: GitHubComment[];
  /** The pull requests' conversations (issue and review comments: github-comments.ts). */
  thread: Thread;
}

export interface GitHubTokenGrant {
  login?: string;
  push?: boolean;
}

export interface GitHubAppOptions {
  id: number;
  /** The public half of the app's key: JWTs must verify against it. */
  publicKey: KeyObject | string;
  installationId: number;
  /** Lifetime of minted installation tokens (GitHub: one hour). */
  tokenTtlSeconds?: number;
  permissions?: Record<string, string>;
}

export interface GitHubApiOptions {
  /** `/api/v3` for GitHub Enterprise Server; github.com serves at the root. */
  pathPrefix?: string;
  tokens?: Record<string, GitHubTokenGrant>;
  app?: GitHubAppOptions;
}

export interface MintedToken {
  token: string;
  expiresAt: number;
  /** The verified JWT's claims. */
  claims: { iss: unknown; iat: number; exp: number };
}

export interface GitHubApi extends HostDoubleServer {
  /** The API base to give as `apiUrl` (origin plus path prefix). */
  baseUrl: string;
  violations: Violation[];
  minted: MintedToken[];
  /** The host's users and their permission on repositories (`admin`, `maintain`, `write`, `read`). */
  users: DoubleUsers;
  /** A repository's conversation endpoints: its comments' JSON and webhook payloads. */
  conversation(fullName: string): ReturnType<typeof gitHubCommentEndpoints>;
  addRepo(
    fullName: string,
    options?: {
      branches?: string[];
      defaultBranch?: string;
      private?: boolean;
      draftsSupported?: boolean;
      /** A real repository: commits, diffs and branches come from it. */
      git?: GitRepository;
    },
  ): GitHubRepo;
  repo(fullName: string): GitHubRepo;
  /** Adds a pull request directly (as another client would). */
  openPull(fullName: string, pull: Partial<GitHubPull> & { head: string }): GitHubPull;
  /** Merges a pull request of a git-backed repository the way GitHub's merge button does. */
  mergePull(fullName: string, number: number, method?: 'merge' | 'squash' | 'rebase'): GitHubPull;
  /** Closes a pull request without merging it. */
  closePull(fullName: string, number: number): GitHubPull;
  /** Commit author emails that belong to GitHub accounts (their commits get an `author`). */
  logins: Record<string, string>;
}

const DOCS = 'https://docs.github.com/rest';

/** The REST API versions GitHub serves (`X-GitHub-Api-Version`). */
const API_VERSIONS = new Set(['2022-11-28', '2026-03-10']);

const errorBody = (status: number, message?: string) => ({
  message:
    message ??
    (
      { 401: 'Bad credentials', 403: 'Forbidden', 404: 'Not Found', 422: 'Validation Failed' } as Record<
        number,
        string
      >
    )[status] ??
    (status >= 500 ? 'Server Error' : 'Error'),
  documentation_url: DOCS,
  status: String(status),
});

const validationFailed = (errors: Json[]): HostAnswer => ({
  status: 422,
  body: { message: 'Validation Failed', errors, documentation_url: DOCS, status: '422' },
});

export async function startGitHubApi(options: GitHubApiOptions = {}): Promise<GitHubApi> {
  loadDescription();
  const prefix = (options.pathPrefix ?? '').replace(/\/+$/, '');
  const repos = new Map<string, GitHubRepo>();
  const tokens = new Map<string, GitHubTokenGrant & { expiresAt?: number; app?: boolean }>(
    Object.entries(options.tokens ?? {}),
  );
  const violations: Violation[] = [];
  const minted: MintedToken[] = [];
  let nextId = 1000;
  let origin = '';
  // A request's resolved operation, shared between inspect() and handle().
  const resolved = new WeakMap<HostRequest, { operationId: string; params: Record<string, string> }>();

  const key = (fullName: string) => fullName.toLowerCase();

  function inspect(request: HostRequest): HostAnswer | undefined {
    // GitHub refuses a request without a User-Agent, and one asking for an API version it does not have.
    if (!request.headers['user-agent']) {
      violations.push({ method: request.method, path: request.path, message: 'no User-Agent' });
      return {
        status: 403,
        body: errorBody(
          403,
          'Request forbidden by administrative rules. Please make sure your request has a User-Agent header',
        ),
      };
    }
    const version = request.headers['x-github-api-version'];
    if (version !== undefined && !API_VERSIONS.has(String(version))) {
      violations.push({ method: request.method, path: request.path, message: `API version ${version}` });
      return { status: 400, body: errorBody(400, `Unsupported 'X-GitHub-Api-Version': ${version}`) };
    }
    if (prefix && !request.path.startsWith(`${prefix}/`)) {
      violations.push({ method: request.method, path: request.path, message: `outside ${prefix}` });
      return { status: 404, body: errorBody(404) };
    }
    const path = request.path.slice(prefix.length);
    const { operation, params, problems } = checkAgainstDescription(
      request.method,
      path,
      request.query,
      request.body,
      request.headers['content-type'],
    );
    if (problems.length > 0) {
      const message = problems.join('; ');
      violations.push({
        method: request.method,
        path: request.path,
        operation: operation?.operationId,
        message,
      });
      return operation
        ? { status: 400, body: errorBody(400, `Request does not match the API description: ${message}`) }
        : { status: 404, body: errorBody(404) };
    }
    if (operation) resolved.set(request, { operationId: operation.operationId, params });
    return undefined;
  }

  const htmlUrl = (repo: GitHubRepo, number?: number) =>
    `${origin}/${repo.owner}/${repo.name}${number === undefined ? '' : `/pull/${number}`}`;

  function repoJson(repo: GitHubRepo, grant: GitHubTokenGrant & { app?: boolean }) {
    return {
      id: repo.id,
      node_id: `R_${repo.id}`,
      name: repo.name,
      full_name: `${repo.owner}/${repo.name}`,
      private: repo.private,
      owner: { login: repo.owner, id: repo.id + 1, type: 'Organization' },
      html_url: htmlUrl(repo),
      url: `${origin}${prefix}/repos/${repo.owner}/${repo.name}`,
      default_branch: repo.defaultBranch,
      // Installation tokens are not a user: GitHub gives them no per-user permissions.
      ...(grant.app
        ? {}
        : {
            permissions: {
              admin: false,
              maintain: false,
              push: grant.push ?? false,
              triage: grant.push ?? false,
              pull: true,
            },
          }),
    };
  }

  const now = (repo: GitHubRepo) => (repo.git ? repo.git.now() : new Date()).toISOString();

  /** A pull request as GitHub's lists show it (`pull-request-simple`). */
  function pullJson(repo: GitHubRepo, pull: GitHubPull) {
    const sha = (ref: string, frozen: string | null) =>
      frozen ?? repo.git?.resolve(`refs/heads/${ref}`) ?? '0'.repeat(40);
    const branchJson = (ref: string, at: string) => ({
      label: `${repo.owner}:${ref}`,
      ref,
      sha: at,
      repo: { id: repo.id, name: repo.name, full_name: `${repo.owner}/${repo.name}` },
    });
    return {
      id: repo.id * 1000 + pull.number,
      number: pull.number,
      state: pull.state,
      title: pull.title,
      body: pull.body,
      draft: pull.draft,
      html_url: htmlUrl(repo, pull.number),
      url: `${origin}${prefix}/repos/${repo.owner}/${repo.name}/pulls/${pull.number}`,
      user: { login: pull.user },
      head: branchJson(pull.head, sha(pull.head, pull.headSha)),
      base: branchJson(pull.base, sha(pull.base, null)),
      labels: pull.labels.map((name) => repo.labels.get(name.toLowerCase())),
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: pull.closedAt,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
    };
  }

  /** A new pull request's state, at the repository's time. */
  function newPull(
    repo: GitHubRepo,
    pull: Partial<GitHubPull> & { head: string; number: number; user: string },
  ): GitHubPull {
    const at = now(repo);
    return {
      title: 'Opened elsewhere',
      body: null,
      base: repo.defaultBranch,
      draft: false,
      state: 'open',
      labels: [],
      createdAt: at,
      updatedAt: at,
      closedAt: null,
      mergedAt: null,
      mergeCommitSha: null,
      headSha: null,
      baseSha: null,
      landed: [],
      ...pull,
    };
  }

  /** The change endpoints of a git-backed repository. */
  const endpoints = new WeakMap<GitHubRepo, ReturnType<typeof changeEndpoints>>();
  function changesOf(repo: GitHubRepo) {
    const git = repo.git;
    if (!git) return undefined;
    let found = endpoints.get(repo);
    if (!found) {
      found = changeEndpoints({
        origin,
        prefix,
        owner: repo.owner,
        name: repo.name,
        git,
        pulls: repo.pulls,
        comments: repo.comments,
        logins: api.logins,
        nextId: () => nextId++,
        now: () => now(repo),
        pullJson: (pull) => pullJson(repo, pull),
      });
      endpoints.set(repo, found);
    }
    return found;
  }

  const users = new DoubleUsers();
  const conversations = new WeakMap<GitHubRepo, ReturnType<typeof gitHubCommentEndpoints>>();
  function conversationOf(repo: GitHubRepo) {
    let found = conversations.get(repo);
    if (!found) {
      found = gitHubCommentEndpoints({
        origin,
        prefix,
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

  const hasBranch = (repo: GitHubRepo, ref: string) =>
    repo.branches.has(ref) || Boolean(repo.git?.resolve(`refs/heads/${ref}`));

  function authenticate(request: HostRequest) {
    const auth = authorization(request);
    if (!auth || (auth.scheme !== 'token' && auth.scheme !== 'bearer')) return undefined;
    const grant = tokens.get(auth.credential);
    if (!grant || (grant.expiresAt !== undefined && grant.expiresAt <= Date.now())) return undefined;
    return grant;
  }

  /** The refusal of a request not signed by the App's JWT (RS256, its key, its id, in time), or undefined. */
  function refuseAppJwt(request: HostRequest): HostAnswer | undefined {
    const app = options.app;
    const auth = authorization(request);
    const unauthorized = (message: string) => ({ status: 401, body: errorBody(401, message) });
    if (!app) return { status: 404, body: errorBody(404) };
    if (auth?.scheme !== 'bearer') return unauthorized('A JSON web token could not be decoded');
    const [header, payload, signature] = auth.credential.split('.');
    if (!header || !payload || !signature) return unauthorized('A JSON web token could not be decoded');
    let claims: { iss: unknown; iat: number; exp: number };
    let alg: unknown;
    try {
      alg = JSON.parse(Buffer.from(header, 'base64url').toString()).alg;
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    } catch {
      return unauthorized('A JSON web token could not be decoded');
    }
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${header}.${payload}`),
      app.publicKey,
      Buffer.from(signature, 'base64url'),
    );
    if (alg !== 'RS256' || !signed) {
      return unauthorized("'Issuer' claim ('iss') must be an Integer or the JWT signature does not match");
    }
    const now = Math.floor(Date.now() / 1000);
    if (String(claims.iss) !== String(app.id)) return unauthorized(`Integration not found`);
    if (typeof claims.exp !== 'number' || claims.exp <= now)
      return unauthorized("'Expiration time' claim ('exp') is too far in the past");
    if (claims.exp - now > 600)
      return unauthorized("'Expiration time' claim ('exp') is too far in the future");
    if (typeof claims.iat !== 'number' || claims.iat > now + 60) {
      return unauthorized(
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      );
    }
    return undefined;
  }

  /** POST /app/installations/{id}/access_tokens: a JWT signed with the app's key, RS256. */
  function mint(request: HostRequest, installationId: number): HostAnswer {
    const app = options.app;
    if (!app) return { status: 404, body: errorBody(404) };
    const refused = refuseAppJwt(request);
    if (refused) return refused;
    if (installationId !== app.installationId) return { status: 404, body: errorBody(404) };
    const now = Math.floor(Date.now() / 1000);
    const jwt = authorization(request)!.credential.split('.')[1]!;
    const claims = JSON.parse(Buffer.from(jwt, 'base64url').toString()) as MintedToken['claims'];
    const token = `ghs_${randomBytes(18).toString('base64url')}`;
    const expiresAt = (now + (app.tokenTtlSeconds ?? 3600)) * 1000;
    tokens.set(token, { login: `app-${app.id}[bot]`, push: true, expiresAt, app: true });
    minted.push({ token, expiresAt, claims });
    const permissions = app.permissions ?? { contents: 'write', pull_requests: 'write', metadata: 'read' };
    return {
      status: 201,
      body: {
        token,
        expires_at: new Date(expiresAt).toISOString(),
        permissions,
        repository_selection: 'all',
      },
    };
  }

  function handle(request: HostRequest): HostAnswer {
    const op = resolved.get(request);
    if (!op) return { status: 404, body: errorBody(404) };
    const { operationId, params } = op;
    if (operationId === 'apps/create-installation-access-token') {
      return mint(request, Number(params.installation_id));
    }
    if (operationId === 'apps/get-authenticated') {
      const app = options.app;
      if (!app) return { status: 404, body: errorBody(404) };
      const refused = refuseAppJwt(request);
      if (refused) return refused;
      // Its installation tokens act as `app-<id>[bot]` (see mint).
      return { status: 200, body: { id: app.id, slug: `app-${app.id}`, name: `App ${app.id}` } };
    }
    const grant = authenticate(request);
    if (!grant) {
      return {
        status: 401,
        body: errorBody(401, authorization(request) ? 'Bad credentials' : 'Requires authentication'),
      };
    }
    if (operationId === 'users/get-authenticated') {
      return {
        status: 200,
        body: gitHubUserJson(origin, prefix, users.user(grant.login ?? 'docwright-bot')),
      };
    }
    const repo = repos.get(key(`${params.owner}/${params.repo}`));
    if (!repo) return { status: 404, body: errorBody(404) };
    const body = (request.body ?? {}) as Json;
    // A git-backed repository's comments on pull requests stay the change endpoints' (commentOnSource).
    if (!(repo.git && operationId === 'issues/create-comment')) {
      const answer = conversationOf(repo).answer(
        operationId,
        params,
        request,
        grant.login ?? 'docwright-bot',
      );
      if (answer) return answer;
    }
    const forbidden = () => ({
      status: 403,
      body: errorBody(403, 'Resource not accessible by personal access token'),
    });

    switch (operationId) {
      case 'repos/get':
        return { status: 200, body: repoJson(repo, grant) };

      case 'pulls/list': {
        const state = request.query.get('state') ?? 'open';
        const head = request.query.get('head');
        const base = request.query.get('base');
        const sort = request.query.get('sort') ?? 'created';
        const ascending = (request.query.get('direction') ?? 'desc') === 'asc';
        const key = (p: GitHubPull) => (sort === 'updated' ? Date.parse(p.updatedAt) : p.number);
        const list = repo.pulls
          .filter((p) => state === 'all' || p.state === state)
          .filter((p) => {
            if (!head) return true;
            const [owner, ref] = head.includes(':') ? head.split(':', 2) : [repo.owner, head];
            return owner?.toLowerCase() === repo.owner.toLowerCase() && ref === p.head;
          })
          .filter((p) => !base || p.base === base)
          .sort((a, b) => (ascending ? key(a) - key(b) : key(b) - key(a)));
        const { items, headers } = githubPage(request, origin, list);
        return { status: 200, headers, body: items.map((p) => pullJson(repo, p)) };
      }

      case 'pulls/get': {
        const pull = repo.pulls.find((p) => p.number === Number(params.pull_number));
        if (!pull) return { status: 404, body: errorBody(404) };
        const detail = changesOf(repo)?.pullDetail(pull) ?? {};
        return { status: 200, body: { ...pullJson(repo, pull), ...detail } };
      }

      case 'pulls/create': {
        if (!grant.push) return forbidden();
        const headRef = String(body.head ?? '');
        const ref = headRef.includes(':') ? headRef.split(':', 2)[1]! : headRef;
        const base = String(body.base ?? '');
        if (!hasBranch(repo, ref)) {
          return validationFailed([{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
        }
        if (!hasBranch(repo, base)) {
          return validationFailed([{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
        }
        if (repo.pulls.some((p) => p.state === 'open' && p.head === ref && p.base === base)) {
          return validationFailed([
            {
              resource: 'PullRequest',
              code: 'custom',
              message: `A pull request already exists for ${repo.owner}:${ref}.`,
            },
          ]);
        }
        if (body.draft === true && !repo.draftsSupported) {
          return validationFailed([
            {
              resource: 'PullRequest',
              code: 'custom',
              message: 'Draft pull requests are not supported in this repository.',
            },
          ]);
        }
        const pull = newPull(repo, {
          number: repo.nextNumber++,
          title: String(body.title ?? ''),
          body: typeof body.body === 'string' ? body.body : null,
          head: ref,
          base,
          draft: body.draft === true,
          user: grant.login ?? 'docwright-bot',
        });
        repo.pulls.push(pull);
        return { status: 201, body: pullJson(repo, pull) };
      }

      case 'issues/add-labels': {
        if (!grant.push) return forbidden();
        const pull = repo.pulls.find((p) => p.number === Number(params.issue_number));
        if (!pull) return { status: 404, body: errorBody(404) };
        const names = (Array.isArray(body) ? body : ((body.labels as unknown[]) ?? [])).map((l) =>
          typeof l === 'string' ? l : String((l as Json).name),
        );
        for (const name of names) {
          if (!repo.labels.has(name.toLowerCase())) {
            repo.labels.set(name.toLowerCase(), { id: nextId++, name, color: 'ededed' });
          }
          if (!pull.labels.some((l) => l.toLowerCase() === name.toLowerCase())) pull.labels.push(name);
        }
        return { status: 200, body: pull.labels.map((name) => repo.labels.get(name.toLowerCase())) };
      }

      default:
        return (
          changesOf(repo)?.answer(operationId, params, request, grant.login ?? 'docwright-bot') ?? {
            status: 404,
            body: errorBody(404, `the double does not implement ${operationId} without a git repository`),
          }
        );
    }
  }

  /** The double's own successful answers must be what GitHub's description says they are. */
  function checkAnswer(request: HostRequest, answer: HostAnswer) {
    const op = resolved.get(request);
    if (!op || answer.status >= 300) return;
    const problem = checkAnswerAgainstDescription(op.operationId, answer.body);
    if (problem) {
      violations.push({
        method: request.method,
        path: request.path,
        operation: op.operationId,
        message: problem,
      });
    }
  }

  const server = await startHostDouble(handle, {
    errorBody: (status) => errorBody(status),
    inspect,
    checkAnswer,
    commonHeaders: () => ({
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '4999',
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      'x-github-api-version-selected': '2022-11-28',
    }),
  });
  origin = server.origin;

  const api: GitHubApi = {
    ...server,
    baseUrl: `${server.origin}${prefix}`,
    violations,
    minted,
    users,
    conversation: (fullName) => conversationOf(api.repo(fullName)),
    addRepo(fullName, repoOptions = {}) {
      const [owner, name] = fullName.split('/') as [string, string];
      const defaultBranch = repoOptions.defaultBranch ?? 'main';
      const repo: GitHubRepo = {
        id: nextId++,
        owner,
        name,
        private: repoOptions.private ?? true,
        defaultBranch,
        branches: new Set([defaultBranch, ...(repoOptions.branches ?? [])]),
        pulls: [],
        labels: new Map(),
        nextNumber: 1,
        draftsSupported: repoOptions.draftsSupported ?? true,
        ...(repoOptions.git ? { git: repoOptions.git } : {}),
        comments: [],
        thread: new Thread(),
      };
      repos.set(key(fullName), repo);
      return repo;
    },
    repo(fullName) {
      const repo = repos.get(key(fullName));
      if (!repo) throw new Error(`no repository ${fullName} in the double`);
      return repo;
    },
    openPull(fullName, pull) {
      const repo = api.repo(fullName);
      repo.branches.add(pull.head);
      const created = newPull(repo, { number: repo.nextNumber++, user: 'someone', ...pull });
      repo.pulls.push(created);
      return created;
    },
    mergePull(fullName, number, method = 'merge') {
      const repo = api.repo(fullName);
      const pull = repo.pulls.find((p) => p.number === number);
      if (!pull || !repo.git || pull.state !== 'open')
        throw new Error(`cannot merge #${number} of ${fullName}`);
      const git = repo.git;
      pull.headSha = git.head(pull.head);
      pull.baseSha = git.mergeBase(git.head(pull.base), pull.headSha);
      const at = now(repo);
      const message =
        method === 'squash'
          ? `${pull.title} (#${number})`
          : `Merge pull request #${number} from ${repo.owner}/${pull.head}\n\n${pull.title}`;
      pull.landed = git.merge(pull.base, pull.head, method, message);
      Object.assign(pull, {
        state: 'closed',
        mergedAt: at,
        closedAt: at,
        updatedAt: at,
        mergeCommitSha: pull.landed.at(-1) ?? null,
      });
      return pull;
    },
    closePull(fullName, number) {
      const repo = api.repo(fullName);
      const pull = repo.pulls.find((p) => p.number === number);
      if (!pull) throw new Error(`no pull request #${number} in ${fullName}`);
      const at = now(repo);
      Object.assign(pull, {
        state: 'closed',
        closedAt: at,
        updatedAt: at,
        headSha: repo.git?.resolve(`refs/heads/${pull.head}`) ?? null,
      });
      return pull;
    },
    logins: {},
  };
  return api;
}
