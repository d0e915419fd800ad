/**
 * GitHub and GitHub Enterprise Server through Octokit: a personal access
 * token, or a GitHub App installation whose access token is minted with
 * `@octokit/auth-app` and kept until shortly before it expires.
 */
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { processSecrets, type Redact, SecretRegistry } from '../../redact.ts';
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
  toHostError,
  trimSlash,
} from './common.ts';
import { type HostCredentials, HostError, type PullRequestInput } from './host.ts';
import { apiMessage, HttpFailure, withRetry, withTimeout } from './http.ts';

/** The user name git sends with a token (personal or installation) over HTTPS. */
export const GITHUB_GIT_USERNAME = 'x-access-token';

/** An installation token is renewed when it has less than this left (or half its life, if shorter). */
export const INSTALLATION_TOKEN_RENEW_MS = 5 * 60_000;

/** github.com → https://api.github.com; GitHub Enterprise Server → `apiUrl`, else `<origin>/api/v3`. */
export function githubApiBase(project: Pick<HostProject, 'repository' | 'apiUrl'>): string {
  if (project.apiUrl) return trimSlash(project.apiUrl);
  const { origin } = parseRemoteRepository(project.repository);
  const hostname = new URL(origin).hostname.toLowerCase();
  if (hostname === 'github.com' || hostname === 'www.github.com') return 'https://api.github.com';
  return `${origin}/api/v3`;
}

const silentLog = { debug() {}, info() {}, warn() {}, error() {} };

interface Installation {
  token: string;
  /** When to mint a new one: shortly before it expires. */
  renewAt: number;
  permissions: Record<string, string>;
}

interface OctokitError {
  status: number;
  message: string;
  response?: { headers: Record<string, unknown>; data: unknown };
}

const isOctokitError = (error: unknown): error is OctokitError =>
  error instanceof Error && typeof (error as { status?: unknown }).status === 'number';

/** An Octokit failure as an `HttpFailure`, or the caller's abort. */
function toFailure(error: unknown, redact: Redact, timeout?: AbortSignal): unknown {
  if (error instanceof HttpFailure || !isOctokitError(error)) return error;
  const response = error.response;
  if (!response) {
    const reason = timeout?.aborted ? 'no answer in time' : error.message;
    return new HttpFailure(undefined, redact(reason));
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[name] = String(value);
  }
  const message = apiMessage(response.data);
  const rateLimited =
    (error.status === 403 || error.status === 429) &&
    (headers['x-ratelimit-remaining'] === '0' ||
      headers['retry-after'] !== undefined ||
      /rate limit/i.test(message));
  return new HttpFailure(error.status, redact(message || error.message), {
    headers,
    body: response.data,
    rateLimited,
  });
}

/** 422 validation errors naming the head or base branch. */
function isBranchProblem(failure: HttpFailure): boolean {
  const body = failure.body as { errors?: { field?: string; message?: string }[] } | undefined;
  const fields = Array.isArray(body?.errors) ? body.errors : [];
  return (
    fields.some((e) => e.field === 'head' || e.field === 'base') ||
    /\b(head|base)\b.*\b(invalid|not found|does not exist)/i.test(failure.message)
  );
}

export function createGitHubHost(
  project: Pick<HostProject, 'repository' | 'apiUrl'>,
  secrets: HostCredentials,
  options: HostOptions = {},
): ApiCodeHost {
  const remote = parseRemoteRepository(project.repository);
  const [owner, repo] = remote.segments.slice(-2) as [string, string];
  const fullName = `${owner}/${repo}`;
  const baseUrl = githubApiBase(project);
  const hostName = `GitHub (${new URL(baseUrl).host})`;
  const policy = retryPolicy(options);
  const clock = options.now ?? Date.now;
  const requestDefaults = options.fetch ? { fetch: options.fetch } : {};
  // A registry rather than a fixed redactor: installation tokens join it as they are minted.
  const known = new SecretRegistry();
  known.add(secrets.token, secrets.githubPrivateKey);
  const redact = known.redact;

  const app =
    secrets.githubAppId && secrets.githubPrivateKey && secrets.githubInstallationId
      ? {
          appId: Number(secrets.githubAppId),
          privateKey: secrets.githubPrivateKey,
          installationId: Number(secrets.githubInstallationId),
        }
      : undefined;
  const partialApp =
    !app && Boolean(secrets.githubAppId || secrets.githubPrivateKey || secrets.githubInstallationId);

  const failures = hostFailures({
    host: hostName,
    repository: fullName,
    redact,
    noun: 'pull request',
  });
  const { context } = failures;

  let installation: Installation | undefined;
  let minting: Promise<Installation> | undefined;

  /** One try of an Octokit request under the per-request timeout; its failure comes out as an `HttpFailure`. */
  async function attempt<T>(
    signal: AbortSignal | undefined,
    run: (request: { signal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    const bounded = withTimeout(signal, policy.timeoutMs);
    try {
      return await run({ signal: bounded.signal });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw toFailure(error, redact, bounded.timeout);
    }
  }

  async function mint(signal?: AbortSignal): Promise<Installation> {
    if (!app) throw new HostError('host-auth-failed', 'no GitHub App is configured');
    const ctx = context(
      `get an access token for GitHub App installation ${app.installationId}`,
      'host-auth-failed',
      'host-auth-failed',
      `app ${app.appId} has no installation ${app.installationId}`,
    );
    try {
      const result = await withRetry(
        () =>
          attempt(signal, (request) => {
            const plain = new Octokit({
              baseUrl,
              log: silentLog,
              request: { ...requestDefaults, ...request },
            });
            const auth = createAppAuth({ ...app, request: plain.request, log: silentLog });
            return auth({ type: 'installation', refresh: true });
          }),
        policy,
        signal,
      );
      known.add(result.token);
      // Minted, never stored: the logger can only know it from here.
      processSecrets.add(result.token);
      const now = clock();
      const expiresAt = Date.parse(result.expiresAt);
      const lifetime = Number.isFinite(expiresAt) ? expiresAt - now : 0;
      return {
        token: result.token,
        renewAt: now + lifetime - Math.min(INSTALLATION_TOKEN_RENEW_MS, lifetime / 2),
        permissions: result.permissions ?? {},
      };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (!(error instanceof HttpFailure) && !(error instanceof HostError)) {
        // Signing the JWT failed: the private key is not a usable RSA key.
        const message = error instanceof Error ? error.message : String(error);
        throw new HostError(
          'host-auth-failed',
          redact(`the GitHub App private key cannot sign a token: ${message}`),
        );
      }
      throw toHostError(error, ctx);
    }
  }

  /** The installation token, minted once and reused until shortly before it expires. */
  async function installationToken(signal?: AbortSignal): Promise<Installation> {
    if (installation && clock() < installation.renewAt) return installation;
    minting ??= mint(signal).finally(() => {
      minting = undefined;
    });
    installation = await minting;
    return installation;
  }

  async function accessToken(signal?: AbortSignal): Promise<string | undefined> {
    if (app) return (await installationToken(signal)).token;
    if (secrets.token) return secrets.token;
    if (partialApp) {
      throw new HostError(
        'host-auth-failed',
        'the GitHub App credentials are incomplete: set the app id, the private key and the installation id',
      );
    }
    return undefined;
  }

  let client: { token: string | undefined; octokit: Octokit } | undefined;

  /** One API call with retries; failures come out as `HttpFailure`s. */
  function call<T>(
    signal: AbortSignal | undefined,
    run: (octokit: Octokit, request: { signal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    return withRetry(
      async () => {
        const token = await accessToken(signal);
        if (!client || client.token !== token) {
          client = {
            token,
            octokit: new Octokit({ auth: token, baseUrl, log: silentLog, request: requestDefaults }),
          };
        }
        const { octokit } = client;
        return attempt(signal, (request) => run(octokit, request));
      },
      policy,
      signal,
    );
  }

  async function findOpen(branch: string, signal?: AbortSignal): Promise<PullRequestRef | undefined> {
    const { data } = await call(signal, (octokit, request) =>
      octokit.rest.pulls.list({
        owner,
        repo,
        state: 'open',
        head: `${owner}:${branch}`,
        per_page: 100,
        request,
      }),
    );
    const pr = data.find((p) => p.head.ref === branch) ?? data[0];
    return pr ? { url: pr.html_url, number: pr.number } : undefined;
  }

  async function create(
    input: PullRequestInput,
    draft: boolean,
    signal?: AbortSignal,
  ): Promise<PullRequestRef> {
    const { data } = await call(signal, (octokit, request) =>
      octokit.rest.pulls.create({
        owner,
        repo,
        title: input.title,
        body: input.body,
        head: input.branch,
        base: input.base,
        ...(draft ? { draft: true } : {}),
        request,
      }),
    );
    return { url: data.html_url, number: data.number };
  }

  /** GitHub's 422 for a second open pull request from the same head into the same base. */
  const isAlreadyExists = (error: unknown) =>
    error instanceof HttpFailure && error.status === 422 && /already exists/i.test(error.message);

  /** The create, with GitHub's own refusals handled; "already exists" goes out unchanged. */
  async function createOrFallBack(input: PullRequestInput, notes: string[], signal?: AbortSignal) {
    try {
      return await create(input, input.draft, signal);
    } catch (error) {
      if (!(error instanceof HttpFailure) || error.status !== 422 || isAlreadyExists(error)) throw error;
      if (input.draft && /draft/i.test(error.message)) {
        // Private repositories on free plans refuse drafts; a ready pull request beats none.
        notes.push(`draft pull requests are not available in ${fullName}; opened a ready one instead`);
        return create(input, false, signal);
      }
      if (isBranchProblem(error)) throw failures.branchNotFound(input, error);
      throw error;
    }
  }

  /** Labels are a second request on GitHub; one that fails leaves the pull request open, with a note. */
  async function addLabels(number: number, labels: string[], notes: string[], signal?: AbortSignal) {
    try {
      await call(signal, (octokit, request) =>
        octokit.rest.issues.addLabels({ owner, repo, issue_number: number, labels, request }),
      );
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const failure = toHostError(error, context('add labels', 'pr-create-failed', 'pr-create-failed'));
      notes.push(`the labels were not added: ${failure.message}`);
    }
  }

  async function openPullRequest(input: PullRequestInput, signal?: AbortSignal): Promise<HostPullRequest> {
    const notes: string[] = [];
    const { outcome, ...pr } = await openOrReusePullRequest({
      find: () => findOpen(input.branch, signal),
      create: () => createOrFallBack(input, notes, signal),
      isAlreadyExists,
      policy,
      signal,
    });
    // A `conflict` may be this call's own create, retried after its answer was lost: it gets the labels
    // too (adding them is idempotent). One found by the lookup is left as it is: someone may have
    // removed a label on purpose.
    if (outcome !== 'found' && input.labels.length > 0)
      await addLabels(pr.number, input.labels, notes, signal);
    return { ...pr, created: outcome === 'created', notes };
  }

  return {
    kind: 'github',

    async gitRemote(signal) {
      // Minting here makes a bad App configuration fail before the clone.
      await accessToken(signal);
      return { url: `${remote.url}.git`, env: {} };
    },

    async gitCredentials(signal): Promise<GitCredentials | null> {
      const token = await accessToken(signal);
      return token ? { username: GITHUB_GIT_USERNAME, token } : null;
    },

    ensurePullRequest(input, signal) {
      return failures.pullRequest(input, signal, () => openPullRequest(input, signal));
    },

    checkAccess(signal) {
      return failures.access(signal, async () => {
        const { data } = await call(signal, (octokit, request) =>
          octokit.rest.repos.get({ owner, repo, request }),
        );
        // Installation tokens get no per-user `permissions`; the token's own grant tells.
        const push =
          data.permissions?.push ?? (installation ? installation.permissions.contents === 'write' : false);
        const how = app ? `GitHub App installation ${app.installationId}` : 'the token';
        return {
          read: true,
          push,
          detail: push
            ? `${how} can read and push to ${fullName} on ${hostName}`
            : `${how} can read ${fullName} on ${hostName} but not push to it`,
        };
      });
    },
  };
}
