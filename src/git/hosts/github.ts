/**
 * GitHub and GitHub Enterprise Server over the shared HTTP client (http.ts), like GitLab and
 * Gitea: a personal access token, or a GitHub App installation whose access token is minted
 * with a JWT that `@octokit/auth-app` signs, and kept until shortly before it expires.
 */
import { createAppAuth } from '@octokit/auth-app';
import { processSecrets, SecretRegistry } from '../../redact.ts';
import { VERSION } from '../../version.ts';
import { apiAddressCheck } from '../repository-address.ts';
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
  timeoutOf,
  toHostError,
  trimSlash,
} from './common.ts';
import type { HostUser } from './conversation.ts';
import { guardConversation } from './conversation-guard.ts';
import { gitHubChanges } from './github-changes.ts';
import { gitHubConversation } from './github-conversation.ts';
import { type HostCredentials, HostError, type PullRequestInput } from './host.ts';
import { HttpFailure, jsonApi } from './http.ts';

/** The user name git sends with a token (personal or installation) over HTTPS. */
export const GITHUB_GIT_USERNAME = 'x-access-token';

/** An installation token is renewed when it has less than this left (or half its life, if shorter). */
export const INSTALLATION_TOKEN_RENEW_MS = 5 * 60_000;

/** The REST API version every request asks for (GitHub answers in that version's shapes). */
export const GITHUB_API_VERSION = '2022-11-28';

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

/**
 * GitHub's rate limits come as 403 or 429: the primary one with `x-ratelimit-remaining: 0`, the
 * secondary ones with `retry-after` or only their message.
 */
export const isGitHubRateLimit = (status: number, headers: Record<string, string>, message: string) =>
  (status === 403 || status === 429) &&
  (headers['x-ratelimit-remaining'] === '0' ||
    headers['retry-after'] !== undefined ||
    /rate limit/i.test(message));

/** 422 validation errors naming the head or base branch. */
function isBranchProblem(failure: HttpFailure): boolean {
  const { body } = failure;
  // The body is the host's, in whatever shape: only an `errors` list of objects is read.
  const errors =
    body && typeof body === 'object' && 'errors' in body && Array.isArray(body.errors) ? body.errors : [];
  const fields = errors.filter((e): e is { field?: unknown } => typeof e === 'object' && e !== null);
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
  // A registry rather than a fixed redactor: installation tokens join it as they are minted.
  const known = new SecretRegistry();
  known.add(secrets.token, secrets.githubPrivateKey);
  const redact = known.redact;
  const addressCheck = apiAddressCheck(options.allowLinkLocal ?? false);

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

  /** What every request carries but its credentials. */
  const common = {
    accept: 'application/vnd.github+json',
    'x-github-api-version': GITHUB_API_VERSION,
    // GitHub refuses requests without a User-Agent.
    'user-agent': `docwright/${VERSION}`,
  };

  /** The API as the project's credentials (token or installation) see it. */
  const request = jsonApi({
    base: baseUrl,
    headers: async (signal) => {
      const token = await accessToken(signal);
      return token ? { ...common, authorization: `token ${token}` } : common;
    },
    fetch: options.fetch ?? globalThis.fetch,
    policy,
    timeoutMs: timeoutOf(options),
    redact,
    rateLimited: isGitHubRateLimit,
    checkUrl: addressCheck,
  });

  /** The API as the App itself (a JWT): only to mint installation tokens. */
  const asApp = jsonApi({
    base: baseUrl,
    headers: common,
    fetch: options.fetch ?? globalThis.fetch,
    policy,
    timeoutMs: timeoutOf(options),
    redact,
    rateLimited: isGitHubRateLimit,
    checkUrl: addressCheck,
  });

  async function mint(signal?: AbortSignal): Promise<Installation> {
    if (!app) throw new HostError('host-auth-failed', 'no GitHub App is configured');
    const ctx = context(
      `get an access token for GitHub App installation ${app.installationId}`,
      'host-auth-failed',
      'host-auth-failed',
      `app ${app.appId} has no installation ${app.installationId}`,
    );
    let jwt: string;
    try {
      const auth = createAppAuth({ appId: app.appId, privateKey: app.privateKey, log: silentLog });
      jwt = (await auth({ type: 'app' })).token;
    } catch (error) {
      // Signing the JWT failed: the private key is not a usable RSA key.
      const message = error instanceof Error ? error.message : String(error);
      throw new HostError(
        'host-auth-failed',
        redact(`the GitHub App private key cannot sign a token: ${message}`),
      );
    }
    known.add(jwt);
    try {
      const { body } = await asApp<{
        token?: unknown;
        expires_at?: unknown;
        permissions?: Record<string, string>;
      }>('POST', `/app/installations/${app.installationId}/access_tokens`, {
        headers: { authorization: `bearer ${jwt}` },
        signal,
      });
      const result = body;
      if (typeof result.token !== 'string' || result.token === '') {
        throw new Error('GitHub answered without a token');
      }
      known.add(result.token);
      // Minted, never stored: the logger can only know it from here.
      processSecrets.add(result.token);
      const now = clock();
      const expiresAt = Date.parse(String(result.expires_at));
      const lifetime = Number.isFinite(expiresAt) ? expiresAt - now : 0;
      return {
        token: result.token,
        renewAt: now + lifetime - Math.min(INSTALLATION_TOKEN_RENEW_MS, lifetime / 2),
        permissions: result.permissions ?? {},
      };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
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

  const repoPath = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;

  /**
   * Who an App's installation token acts as: GitHub refuses it `GET /user`, and its comments are
   * by the App's bot account, `<slug>[bot]` (the slug from `GET /app`, asked as the App).
   */
  async function appAccount(signal?: AbortSignal): Promise<HostUser> {
    if (!app) throw new HostError('host-auth-failed', 'no GitHub App is configured');
    const auth = createAppAuth({ appId: app.appId, privateKey: app.privateKey, log: silentLog });
    const jwt = (await auth({ type: 'app' })).token;
    known.add(jwt);
    const { body } = await asApp<{ slug?: unknown }>('GET', '/app', {
      headers: { authorization: `bearer ${jwt}` },
      signal,
    });
    const slug = body.slug;
    if (typeof slug !== 'string' || slug === '') throw new Error('GitHub answered /app without a slug');
    return { id: '', login: `${slug}[bot]` };
  }

  async function findOpen(branch: string, signal?: AbortSignal): Promise<PullRequestRef | undefined> {
    const { body } = await request<{ number: number; html_url: string; head: { ref: string } }[]>(
      'GET',
      `${repoPath}/pulls`,
      {
        query: { state: 'open', head: `${owner}:${branch}`, per_page: 100 },
        signal,
      },
    );
    const list = Array.isArray(body) ? body : [];
    const pr = list.find((p) => p.head?.ref === branch) ?? list[0];
    return pr ? { url: pr.html_url, number: pr.number } : undefined;
  }

  async function create(
    input: PullRequestInput,
    draft: boolean,
    signal?: AbortSignal,
  ): Promise<PullRequestRef> {
    const { body } = await request<{ number: number; html_url: string }>('POST', `${repoPath}/pulls`, {
      body: {
        title: input.title,
        body: input.body,
        head: input.branch,
        base: input.base,
        ...(draft ? { draft: true } : {}),
      },
      signal,
    });
    const pr = body;
    return { url: pr.html_url, number: pr.number };
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
      await request('POST', `${repoPath}/issues/${number}/labels`, { body: { labels }, signal });
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
    ...gitHubChanges({ request, repoPath, fullName, host: hostName, redact }),
    conversation: guardConversation(
      { host: hostName, repository: fullName, redact },
      gitHubConversation({ request, repoPath, ...(app && { whoAmI: appAccount }) }),
    ),

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

    defaultBranch(signal) {
      return failures.read(signal, async () => {
        const data = (await request<{ default_branch?: string }>('GET', repoPath, { signal })).body;
        return data.default_branch || null;
      });
    },

    checkAccess(signal) {
      return failures.access(signal, async () => {
        const data = (await request<{ permissions?: { push?: boolean } }>('GET', repoPath, { signal })).body;
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
