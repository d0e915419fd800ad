import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import type { ApiCodeHost, HostOptions } from '../../src/git/hosts/common.ts';
import { createGiteaHost, giteaApiBase } from '../../src/git/hosts/gitea.ts';
import { createGitHubHost, GITHUB_GIT_USERNAME, githubApiBase } from '../../src/git/hosts/github.ts';
import { createGitLabHost, GITLAB_GIT_USERNAME, gitlabApiHost } from '../../src/git/hosts/gitlab.ts';
import { HostError, type PullRequestInput } from '../../src/git/hosts/host.ts';
import { createHost, pullRequestInput } from '../../src/git/hosts/index.ts';
import type { ProjectSecrets } from '../../src/projects/projects.ts';
import { type GiteaApi, startGiteaApi } from '../doubles/gitea-api.ts';
import {
  checkAgainstDescription,
  checkAnswerAgainstDescription,
  type GitHubApi,
  startGitHubApi,
} from '../doubles/github-api.ts';
import { type GitLabApi, startGitLabApi } from '../doubles/gitlab-api.ts';

/** Retries without waiting, so that the failure tests take milliseconds. */
const FAST: HostOptions = { retry: { baseDelayMs: 1, maxDelayMs: 2_000 } };

const SECRETS = {
  github: 'ghp_secretToken1234567890',
  githubReadOnly: 'ghp_readOnlyToken0987654321',
  gitlab: 'glpat-secretToken12345',
  gitlabReporter: 'glpat-reporterToken6789',
  gitea: 'gitea0123456789abcdef',
  giteaReadOnly: 'giteaReadOnly0123456789',
  wrong: 'wrongToken-abcdef123456',
};

const settings = { draft: true, labels: ['docs', 'automated'] };

let branchCounter = 0;
const nextBranch = () => `docwright/job${String(++branchCounter).padStart(5, '0')}`;

function prInput(branch: string, overrides: Partial<PullRequestInput> = {}): PullRequestInput {
  return {
    ...pullRequestInput(
      { settings: { ...settingsDefaults(), ...settings } },
      {
        branch,
        base: 'main',
        title: 'Document the export command',
        body: 'Added a page for `docs export`.\n\nInstruction: document export\n\nJob: job_01TEST',
      },
    ),
    ...overrides,
  };
}

function settingsDefaults() {
  return {
    docsDir: '.',
    writable: ['**/*.md'],
    allowedModels: [],
    openaiCompatibleBaseUrl: null,
    draft: false,
    labels: [],
    branchPrefix: 'docwright/',
    authorName: 'docwright[bot]',
    authorEmail: 'docwright[bot]@users.noreply.github.com',
  };
}

/** Every error a test saw, checked at the end for secrets too. */
const seenErrors: unknown[] = [];

async function hostError(promise: Promise<unknown>): Promise<HostError> {
  try {
    await promise;
  } catch (error) {
    seenErrors.push(error);
    assert.ok(error instanceof HostError, `expected a HostError, got ${inspect(error)}`);
    assertNoSecret(error);
    return error;
  }
  assert.fail('expected the call to fail');
}

function assertNoSecret(value: unknown, extra: string[] = []) {
  const text =
    typeof value === 'string' ? value : `${(value as Error).message}\n${inspect(value, { depth: 10 })}`;
  for (const secret of [...Object.values(SECRETS), ...extra]) {
    assert.ok(!text.includes(secret), `a secret leaked into: ${text}`);
  }
}

/** A fetch that fails its first request with a network error, then passes through; counts calls. */
function flakyFetch() {
  const state = { calls: 0 };
  const flaky: typeof fetch = async (input, init) => {
    state.calls++;
    if (state.calls === 1) throw new TypeError('fetch failed', { cause: new Error('read ECONNRESET') });
    return fetch(input, init);
  };
  return { fetch: flaky, state };
}

/** A fetch through which the host answers every pull request link as `javascript:` (a broken or hostile host). */
const hostileLinks: typeof fetch = async (input, init) => {
  const answer = await fetch(input, init);
  const text = await answer.text();
  const headers = new Headers(answer.headers);
  headers.delete('content-length');
  return new Response(
    answer.status === 204
      ? null
      : text.replace(/"(html_url|web_url)":"[^"]*"/g, '"$1":"javascript:alert(1)"'),
    { status: answer.status, headers },
  );
};

/** The host's pull request for `branch` is refused for its link, when created and when found later. */
async function refusesHostileLink(host: ApiCodeHost, branch: string) {
  for (const when of ['created', 'found']) {
    const error = await hostError(host.ensurePullRequest(prInput(branch, { labels: [] })));
    assert.equal(error.code, 'pr-create-failed', when);
    assert.match(
      error.message,
      /answered #\d+ with a link that is not http\(s\) \("javascript:alert\(1\)"\)/,
      when,
    );
  }
}

describe('GitHub host', () => {
  let github: GitHubApi;
  const repository = 'https://github.com/octo/docs';
  const host = (secrets: ProjectSecrets = { token: SECRETS.github }, options: HostOptions = FAST) =>
    createGitHubHost({ repository, apiUrl: github.baseUrl }, secrets, { ...FAST, ...options });

  before(async () => {
    github = await startGitHubApi({
      tokens: {
        [SECRETS.github]: { login: 'docs-bot', push: true },
        [SECRETS.githubReadOnly]: { push: false },
      },
    });
    github.addRepo('octo/docs');
  });
  after(() => github.close());

  test('opens a pull request with the title, body, base, head, draft and labels the project asks for', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    const input = prInput(branch);
    const pr = await host().ensurePullRequest(input);
    assert.equal(pr.created, true);
    assert.deepEqual(pr.notes, []);
    const pull = github.repo('octo/docs').pulls.find((p) => p.number === pr.number);
    assert.ok(pull);
    assert.equal(pr.url, `${github.origin}/octo/docs/pull/${pr.number}`);
    assert.equal(pull.title, input.title);
    assert.equal(pull.body, input.body);
    assert.equal(pull.head, branch);
    assert.equal(pull.base, 'main');
    assert.equal(pull.draft, true);
    assert.deepEqual(pull.labels, ['docs', 'automated']);
    const list = github.requests.find((r) => r.method === 'GET' && r.path.endsWith('/pulls'));
    assert.equal(list?.query.get('head'), `octo:${branch}`);
    assert.equal(list?.query.get('state'), 'open');
  });

  test('a pull request link that is not http(s) fails as pr-create-failed, when created and when found', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    await refusesHostileLink(host({ token: SECRETS.github }, { fetch: hostileLinks }), branch);
    assert.equal(github.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('a second call for the same branch returns the open pull request and opens no other', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    const first = await host().ensurePullRequest(prInput(branch));
    const again = await host().ensurePullRequest(prInput(branch, { title: 'A follow-up' }));
    assert.deepEqual({ ...again, notes: [] }, { ...first, created: false, notes: [] });
    assert.equal(github.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('"a pull request already exists" on create (a race) is success with the existing one', async () => {
    const branch = nextBranch();
    const existing = github.openPull('octo/docs', { head: branch, title: 'Opened by a concurrent run' });
    // The lookup misses it (the other run created it just after), so the create answers 422.
    github.answerNext({ method: 'GET', path: /\/pulls$/ }, { status: 200, body: [] });
    const before = github.requests.length;
    const pr = await host().ensurePullRequest(prInput(branch));
    assert.deepEqual(pr, {
      url: `${github.origin}/octo/docs/pull/${existing.number}`,
      number: existing.number,
      created: false,
      notes: [],
    });
    const creates = github.requests
      .slice(before)
      .filter((r) => r.method === 'POST' && r.path.endsWith('/pulls'));
    assert.equal(creates.length, 1, 'one create, answered 422');
    assert.equal(github.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('after "already exists", a lookup that lags behind the write is tried again before giving up', async () => {
    const branch = nextBranch();
    const existing = github.openPull('octo/docs', { head: branch, title: 'Opened by a concurrent run' });
    // The lookup before the create and the first one after the 422 both miss it.
    github.answerNext({ method: 'GET', path: /\/pulls$/ }, { status: 200, body: [] });
    github.answerNext({ method: 'GET', path: /\/pulls$/ }, { status: 200, body: [] });
    const pr = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    assert.deepEqual([pr.number, pr.created], [existing.number, false]);
    assert.equal(github.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('a create that went through but whose answer was lost still gets its labels', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    // GitHub opens the pull request, then the answer is lost (a proxy's 502): the retry is told it already exists.
    let lost = false;
    const lossy: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      if (!lost && init?.method === 'POST' && String(input).endsWith('/pulls')) {
        lost = true;
        return new Response('{"message":"Bad Gateway"}', {
          status: 502,
          headers: { 'content-type': 'application/json' },
        });
      }
      return answer;
    };
    const pr = await host({ token: SECRETS.github }, { ...FAST, fetch: lossy }).ensurePullRequest(
      prInput(branch),
    );
    assert.ok(lost);
    const pulls = github.repo('octo/docs').pulls.filter((p) => p.head === branch);
    assert.equal(pulls.length, 1);
    assert.equal(pr.number, pulls[0]?.number);
    assert.deepEqual(pulls[0]?.labels, ['docs', 'automated']);
    assert.deepEqual(pr.notes, []);
  });

  test('rejected credentials are host-auth-failed', async () => {
    const error = await hostError(host({ token: SECRETS.wrong }).ensurePullRequest(prInput(nextBranch())));
    assert.equal(error.code, 'host-auth-failed');
    assert.equal(error.retryable, false);
    assert.match(error.message, /401/);
  });

  test('a token without write access is host-permission-denied', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    const error = await hostError(host({ token: SECRETS.githubReadOnly }).ensurePullRequest(prInput(branch)));
    assert.equal(error.code, 'host-permission-denied');
    assert.match(error.message, /Resource not accessible/);
    github.failNext(403);
    const scripted = await hostError(host().ensurePullRequest(prInput(branch)));
    assert.equal(scripted.code, 'host-permission-denied');
  });

  test('a 502 is retried, then the pull request opens', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    github.failNext(502, {}, { method: 'POST' });
    const before = github.requests.length;
    const pr = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    assert.equal(pr.created, true);
    const posts = github.requests.slice(before).filter((r) => r.method === 'POST');
    assert.equal(posts.length, 2);
    assert.equal(github.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('rate limits (403 with x-ratelimit-remaining 0, 429 with Retry-After) are retried', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    const now = Math.floor(Date.now() / 1000);
    github.failNext(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now) });
    github.failNext(429, { 'retry-after': '0' });
    const pr = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    assert.equal(pr.created, true);
  });

  test('secondary rate limits (403 with Retry-After, or with only GitHub’s message) are retried', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    github.failNext(403, { 'retry-after': '0' });
    github.answerNext(
      {},
      {
        status: 403,
        body: {
          message:
            'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: 'https://docs.github.com/rest',
        },
      },
    );
    const pr = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    assert.equal(pr.created, true);
  });

  test('every request names docwright, asks for JSON in API version 2022-11-28 and carries the token', async () => {
    await host().checkAccess();
    const last = github.requests.at(-1);
    assert.match(String(last?.headers['user-agent']), /^docwright\/\d+\.\d+\.\d+/);
    assert.equal(last?.headers['x-github-api-version'], '2022-11-28');
    assert.equal(last?.headers.accept, 'application/vnd.github+json');
    assert.equal(last?.headers.authorization, `token ${SECRETS.github}`);
  });

  test('a rate limit longer than the longest wait fails as retryable instead of sleeping', async () => {
    github.failNext(403, { 'x-ratelimit-remaining': '0', 'retry-after': '3600' });
    const started = Date.now();
    const error = await hostError(host().ensurePullRequest(prInput(nextBranch())));
    assert.ok(Date.now() - started < 1_000);
    assert.equal(error.code, 'pr-create-failed');
    assert.equal(error.retryable, true);
    assert.match(error.message, /rate limited.*try again in 3600 s/);
  });

  test('a host that keeps failing gives a retryable error after a few attempts', async () => {
    for (let i = 0; i < 4; i++) github.failNext(503);
    const before = github.requests.length;
    const error = await hostError(host().ensurePullRequest(prInput(nextBranch())));
    assert.equal(github.requests.length - before, 4);
    assert.equal(error.code, 'pr-create-failed');
    assert.equal(error.retryable, true);
  });

  test('an abort stops the backoff at once', async () => {
    github.failNext(502);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('job cancelled')), 20);
    const started = Date.now();
    await assert.rejects(
      createGitHubHost(
        { repository, apiUrl: github.baseUrl },
        { token: SECRETS.github },
        {
          retry: { baseDelayMs: 10_000 },
        },
      ).ensurePullRequest(prInput(nextBranch()), controller.signal),
      /job cancelled/,
    );
    assert.ok(Date.now() - started < 2_000);
  });

  test('a missing branch is ref-not-found', async () => {
    const error = await hostError(host().ensurePullRequest(prInput('docwright/never-pushed')));
    assert.equal(error.code, 'ref-not-found');
  });

  test('where drafts are not available, a ready pull request is opened with a note', async () => {
    const repo = github.addRepo('octo/free-plan', { draftsSupported: false });
    const branch = nextBranch();
    repo.branches.add(branch);
    const pr = await createGitHubHost(
      { repository: 'https://github.com/octo/free-plan', apiUrl: github.baseUrl },
      { token: SECRETS.github },
      FAST,
    ).ensurePullRequest(prInput(branch));
    assert.equal(pr.created, true);
    assert.match(pr.notes.join('\n'), /draft pull requests are not available/);
    assert.equal(repo.pulls[0]?.draft, false);
  });

  test('labels that cannot be added leave the pull request open, with a note', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    github.failNext(403, {}, { path: '/labels' });
    const pr = await host().ensurePullRequest(prInput(branch));
    assert.equal(pr.created, true);
    assert.match(pr.notes.join('\n'), /labels were not added.*403/);
    assertNoSecret(pr.notes.join('\n'));
  });

  test('checkAccess reports read and push permission', async () => {
    assert.deepEqual({ ...(await host().checkAccess()), detail: '' }, { read: true, push: true, detail: '' });
    const readOnly = await host({ token: SECRETS.githubReadOnly }).checkAccess();
    assert.equal(readOnly.read, true);
    assert.equal(readOnly.push, false);
    assert.match(readOnly.detail, /not push/);
    const wrong = await host({ token: SECRETS.wrong }).checkAccess();
    assert.deepEqual([wrong.read, wrong.push], [false, false]);
    assert.match(wrong.detail, /^host-auth-failed/);
    const missing = await createGitHubHost(
      { repository: 'https://github.com/octo/nothing-here', apiUrl: github.baseUrl },
      { token: SECRETS.github },
      FAST,
    ).checkAccess();
    assert.match(
      missing.detail,
      /^host-permission-denied: .*does not exist or these credentials cannot see it/,
    );
    assertNoSecret(`${readOnly.detail}${wrong.detail}${missing.detail}`);
  });

  test('defaultBranch is the repository’s, as GitHub reports it', async () => {
    github.addRepo('octo/trunk-based', { defaultBranch: 'trunk' });
    const trunk = createGitHubHost(
      { repository: 'https://github.com/octo/trunk-based', apiUrl: github.baseUrl },
      { token: SECRETS.github },
      FAST,
    );
    assert.equal(await trunk.defaultBranch(), 'trunk');
    assert.equal(await host().defaultBranch(), 'main');
    assert.equal((await hostError(host({ token: SECRETS.wrong }).defaultBranch())).code, 'host-auth-failed');
  });

  test('gitRemote is the repository URL with .git; git uses x-access-token with the token', async () => {
    assert.deepEqual(await host().gitRemote(), { url: `${repository}.git`, env: {} });
    assert.deepEqual(await host().gitCredentials(), {
      username: GITHUB_GIT_USERNAME,
      token: SECRETS.github,
    });
    assert.equal(await host({}).gitCredentials(), null);
  });

  test('requests go through the injected fetch; a network error is retried', async () => {
    const branch = nextBranch();
    github.repo('octo/docs').branches.add(branch);
    const flaky = flakyFetch();
    const pr = await host({ token: SECRETS.github }, { ...FAST, fetch: flaky.fetch }).ensurePullRequest(
      prInput(branch, { labels: [] }),
    );
    assert.equal(pr.created, true);
    assert.equal(flaky.state.calls, 3, 'the failed lookup, the lookup again, the create');
  });

  test('every request matched GitHub’s published API description', () => {
    assert.ok(github.requests.length > 20);
    assert.deepEqual(github.violations, []);
  });
});

describe('GitHub API description check', () => {
  test('rejects what GitHub would reject, so that zero violations means something', () => {
    const query = new URLSearchParams({ state: 'opened', heads: 'x' });
    const list = checkAgainstDescription('GET', '/repos/o/r/pulls', query, undefined, undefined);
    assert.equal(list.operation?.operationId, 'pulls/list');
    assert.match(list.problems.join('\n'), /query parameter state/);
    assert.match(list.problems.join('\n'), /query parameter heads is not in the description/);
    const create = checkAgainstDescription(
      'POST',
      '/repos/o/r/pulls',
      new URLSearchParams(),
      { title: 'x', head: 'b', draft: 'yes' },
      'application/json',
    );
    assert.match(create.problems.join('\n'), /base/);
    assert.match(create.problems.join('\n'), /draft must be boolean/);
    const labels = checkAgainstDescription(
      'POST',
      '/repos/o/r/issues/abc/labels',
      new URLSearchParams(),
      { labels: ['a'] },
      'application/json',
    );
    assert.match(labels.problems.join('\n'), /issue_number must be integer/);
    assert.match(
      checkAgainstDescription('PUT', '/repos/o/r/pulls', new URLSearchParams(), undefined, undefined)
        .problems[0] ?? '',
      /PUT is not an operation/,
    );
  });
});

describe('GitHub answer description check', () => {
  test('the double’s answers may carry only fields GitHub documents, with GitHub’s types', () => {
    assert.equal(
      checkAnswerAgainstDescription('pulls/get', { number: 1, merged_at: null, head: { ref: 'x' } }),
      undefined,
    );
    assert.match(checkAnswerAgainstDescription('pulls/get', { number: '1' }) ?? '', /number must be integer/);
    assert.match(
      checkAnswerAgainstDescription('pulls/get', { mergedAt: null }) ?? '',
      /additional properties/,
    );
    assert.match(
      checkAnswerAgainstDescription('pulls/list-files', [{ filename: 'a', status: 'changed-a-lot' }]) ?? '',
      /allowed values/,
    );
    assert.match(
      checkAnswerAgainstDescription('issues/create-comment', { id: 1, html_url: 'not a link' }) ?? '',
      /format "uri"/,
    );
  });
});

describe('GitHub Enterprise Server', () => {
  let ghe: GitHubApi;
  before(async () => {
    ghe = await startGitHubApi({ pathPrefix: '/api/v3', tokens: { [SECRETS.github]: { push: true } } });
    ghe.addRepo('platform/handbook', { branches: ['docwright/ghe00001'] });
  });
  after(() => ghe.close());

  test('the API base is api.github.com for github.com and apiUrl (or /api/v3) for Enterprise', () => {
    assert.equal(
      githubApiBase({ repository: 'https://github.com/o/r', apiUrl: null }),
      'https://api.github.com',
    );
    assert.equal(
      githubApiBase({ repository: 'https://ghe.example/o/r', apiUrl: null }),
      'https://ghe.example/api/v3',
    );
    assert.equal(
      githubApiBase({ repository: 'https://ghe.example/o/r', apiUrl: 'https://ghe.example/api/v3/' }),
      'https://ghe.example/api/v3',
    );
  });

  test('requests go to apiUrl', async () => {
    const host = createHost(
      { host: 'github', repository: 'https://ghe.example/platform/handbook', apiUrl: ghe.baseUrl },
      { token: SECRETS.github },
      FAST,
    );
    const pr = await host.ensurePullRequest(prInput('docwright/ghe00001'));
    assert.equal(pr?.created, true);
    assert.equal((await host.checkAccess()).push, true);
    assert.ok(ghe.requests.every((r) => r.path.startsWith('/api/v3/')));
    assert.deepEqual(ghe.violations, []);
  });
});

describe('GitHub App installation', () => {
  const appId = 4242;
  const installationId = 77;
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    // PKCS#1, as GitHub hands out App keys.
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const appSecrets: ProjectSecrets = {
    githubAppId: String(appId),
    githubPrivateKey: keys.privateKey,
    githubInstallationId: String(installationId),
  };
  let github: GitHubApi;
  let renewal: GitHubApi;

  before(async () => {
    github = await startGitHubApi({ app: { id: appId, publicKey: keys.publicKey, installationId } });
    github.addRepo('octo/app-docs', { branches: ['docwright/app00001'] });
    renewal = await startGitHubApi({
      app: { id: appId, publicKey: keys.publicKey, installationId, tokenTtlSeconds: 3600 },
    });
    renewal.addRepo('octo/app-docs', { branches: ['docwright/app00002'] });
  });
  after(async () => {
    await github.close();
    await renewal.close();
  });

  const appHost = (api: GitHubApi, secrets = appSecrets) =>
    createGitHubHost({ repository: 'https://github.com/octo/app-docs', apiUrl: api.baseUrl }, secrets, FAST);

  test('mints an installation token with a JWT signed by the app key and caches it across calls', async () => {
    const host = appHost(github);
    assert.deepEqual(await host.gitRemote(), { url: 'https://github.com/octo/app-docs.git', env: {} });
    const pr = await host.ensurePullRequest(prInput('docwright/app00001'));
    assert.equal(pr.created, true);
    const again = await host.ensurePullRequest(prInput('docwright/app00001'));
    assert.equal(again.created, false);
    const access = await host.checkAccess();
    assert.deepEqual([access.read, access.push], [true, true], access.detail);

    assert.equal(github.minted.length, 1, 'one token for every call');
    const [minted] = github.minted;
    assert.ok(minted);
    assert.equal(minted.claims.iss, appId);
    assert.ok(minted.claims.exp - minted.claims.iat <= 600);
    assert.deepEqual(await host.gitCredentials(), { username: GITHUB_GIT_USERNAME, token: minted.token });
    const apiCalls = github.requests.filter((r) => !r.path.startsWith('/app/'));
    assert.ok(apiCalls.every((r) => r.headers.authorization === `token ${minted.token}`));
    assert.equal(github.repo('octo/app-docs').pulls[0]?.user, `app-${appId}[bot]`);
    assert.deepEqual(github.violations, []);
  });

  test('a token is renewed shortly before it expires', async () => {
    let skew = 0;
    const host = createGitHubHost(
      { repository: 'https://github.com/octo/app-docs', apiUrl: renewal.baseUrl },
      appSecrets,
      { ...FAST, now: () => Date.now() + skew },
    );
    await host.ensurePullRequest(prInput('docwright/app00002'));
    await host.checkAccess();
    assert.equal(renewal.minted.length, 1);
    // An hour-long token is kept for 55 minutes…
    skew = 54 * 60_000;
    await host.checkAccess();
    assert.equal(renewal.minted.length, 1);
    // …then replaced before GitHub would refuse it.
    skew = 56 * 60_000;
    await host.ensurePullRequest(prInput('docwright/app00002'));
    assert.equal(renewal.minted.length, 2);
    assert.notEqual(renewal.minted[0]?.token, renewal.minted[1]?.token);
    const last = renewal.requests.at(-1);
    assert.equal(last?.headers.authorization, `token ${renewal.minted[1]?.token}`);
  });

  test('a JWT signed by another key, or an unknown installation, is host-auth-failed', async () => {
    const other = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const wrongKey = await hostError(
      appHost(github, { ...appSecrets, githubPrivateKey: other.privateKey }).gitRemote(),
    );
    assert.equal(wrongKey.code, 'host-auth-failed');
    assertNoSecret(wrongKey, [other.privateKey, keys.privateKey]);
    const wrongInstallation = await hostError(
      appHost(github, { ...appSecrets, githubInstallationId: '999' }).ensurePullRequest(
        prInput(nextBranch()),
      ),
    );
    assert.equal(wrongInstallation.code, 'host-auth-failed');
    assert.match(wrongInstallation.message, /installation 999/);
    const badKey = await hostError(
      appHost(github, {
        ...appSecrets,
        githubPrivateKey: '-----BEGIN PRIVATE KEY-----\nnot a key\n',
      }).gitRemote(),
    );
    assert.equal(badKey.code, 'host-auth-failed');
    const incomplete = await hostError(appHost(github, { githubAppId: String(appId) }).gitRemote());
    assert.equal(incomplete.code, 'host-auth-failed');
    assert.match(incomplete.message, /incomplete/);
  });
});

describe('GitLab host', () => {
  let gitlab: GitLabApi;
  const repository = 'https://gitlab.example.com/docs-team/site/handbook';
  const host = (token = SECRETS.gitlab, options: HostOptions = FAST): ApiCodeHost =>
    createGitLabHost({ repository, apiUrl: gitlab.origin }, { token }, options);

  before(async () => {
    gitlab = await startGitLabApi({
      tokens: {
        [SECRETS.gitlab]: { username: 'docs-bot', accessLevel: 30 },
        [SECRETS.gitlabReporter]: { accessLevel: 20 },
      },
    });
    gitlab.addProject('docs-team/site/handbook');
  });
  after(() => gitlab.close());

  test('the API host is gitlab.com, the instance origin, or apiUrl without /api/v4', () => {
    assert.equal(gitlabApiHost({ repository: 'https://gitlab.com/g/r', apiUrl: null }), 'https://gitlab.com');
    assert.equal(
      gitlabApiHost({
        repository: 'https://git.corp.example/g/r',
        apiUrl: 'https://git.corp.example/api/v4/',
      }),
      'https://git.corp.example',
    );
  });

  test('opens a merge request with the title, description, branches, draft and labels the project asks for', async () => {
    const branch = nextBranch();
    gitlab.project('docs-team/site/handbook').branches.add(branch);
    const input = prInput(branch);
    const mr = await host().ensurePullRequest(input);
    assert.equal(mr.created, true);
    const stored = gitlab.project('docs-team/site/handbook').mergeRequests.find((m) => m.iid === mr.number);
    assert.ok(stored);
    assert.equal(mr.url, `${gitlab.origin}/docs-team/site/handbook/-/merge_requests/${mr.number}`);
    assert.equal(stored.title, `Draft: ${input.title}`);
    assert.equal(stored.description, input.body);
    assert.equal(stored.sourceBranch, branch);
    assert.equal(stored.targetBranch, 'main');
    assert.deepEqual(stored.labels, ['docs', 'automated']);
    // The namespace path travels URL-encoded as the project id.
    assert.ok(
      gitlab.requests.every((r) => r.path.startsWith('/api/v4/projects/docs-team%2Fsite%2Fhandbook')),
    );
    const list = gitlab.requests.find((r) => r.method === 'GET');
    assert.equal(list?.query.get('source_branch'), branch);
    assert.equal(list?.query.get('state'), 'opened');
  });

  test('a merge request link that is not http(s) fails as pr-create-failed, when created and when found', async () => {
    const branch = nextBranch();
    const project = gitlab.project('docs-team/site/handbook');
    project.branches.add(branch);
    await refusesHostileLink(host(SECRETS.gitlab, { ...FAST, fetch: hostileLinks }), branch);
    assert.equal(project.mergeRequests.filter((m) => m.sourceBranch === branch).length, 1);
  });

  test('a second call for the same branch returns the open merge request', async () => {
    const branch = nextBranch();
    gitlab.project('docs-team/site/handbook').branches.add(branch);
    const first = await host().ensurePullRequest(prInput(branch, { draft: false }));
    const again = await host().ensurePullRequest(prInput(branch));
    assert.deepEqual(again, { ...first, created: false });
    assert.equal(
      gitlab.project('docs-team/site/handbook').mergeRequests.filter((m) => m.sourceBranch === branch).length,
      1,
    );
  });

  test('409 on create (a race) is success with the existing merge request', async () => {
    const branch = nextBranch();
    gitlab.project('docs-team/site/handbook').branches.add(branch);
    const winner = await host().ensurePullRequest(prInput(branch));
    gitlab.answerNext({ method: 'GET', path: /merge_requests$/ }, { status: 200, body: [] });
    const before = gitlab.requests.length;
    const mr = await host().ensurePullRequest(prInput(branch));
    assert.deepEqual(mr, { ...winner, created: false });
    assert.equal(gitlab.requests.slice(before).filter((r) => r.method === 'POST').length, 1);
    assert.equal(
      gitlab.project('docs-team/site/handbook').mergeRequests.filter((m) => m.sourceBranch === branch).length,
      1,
    );
  });

  test('401 is host-auth-failed; 403 is host-permission-denied', async () => {
    const auth = await hostError(host(SECRETS.wrong).ensurePullRequest(prInput(nextBranch())));
    assert.equal(auth.code, 'host-auth-failed');
    const branch = nextBranch();
    gitlab.project('docs-team/site/handbook').branches.add(branch);
    const denied = await hostError(host(SECRETS.gitlabReporter).ensurePullRequest(prInput(branch)));
    assert.equal(denied.code, 'host-permission-denied');
    assert.match(denied.message, /403 Forbidden/);
  });

  test('a 502 is retried, then the merge request opens; a missing branch is ref-not-found', async () => {
    const branch = nextBranch();
    gitlab.project('docs-team/site/handbook').branches.add(branch);
    gitlab.failNext(502, {}, { method: 'POST' });
    gitlab.failNext(429, { 'retry-after': '0' }, { method: 'GET' });
    const mr = await host().ensurePullRequest(prInput(branch));
    assert.equal(mr.created, true);
    const missing = await hostError(host().ensurePullRequest(prInput('docwright/not-pushed')));
    assert.equal(missing.code, 'ref-not-found');
  });

  test('defaultBranch is the project’s, as GitLab reports it', async () => {
    gitlab.addProject('docs-team/trunk-based', { defaultBranch: 'trunk' });
    const trunk = createGitLabHost(
      { repository: 'https://gitlab.example.com/docs-team/trunk-based', apiUrl: gitlab.origin },
      { token: SECRETS.gitlab },
      FAST,
    );
    assert.equal(await trunk.defaultBranch(), 'trunk');
    assert.equal(await host().defaultBranch(), 'main');
  });

  test('checkAccess reports push permission from the access level', async () => {
    const developer = await host().checkAccess();
    assert.deepEqual([developer.read, developer.push], [true, true], developer.detail);
    const reporter = await host(SECRETS.gitlabReporter).checkAccess();
    assert.deepEqual([reporter.read, reporter.push], [true, false]);
    assert.match(reporter.detail, /reporter/);
    const wrong = await host(SECRETS.wrong).checkAccess();
    assert.match(wrong.detail, /^host-auth-failed/);
    assertNoSecret(`${developer.detail}${reporter.detail}${wrong.detail}`);
  });

  test('requests go through the injected fetch; a network error is retried', async () => {
    const branch = nextBranch();
    gitlab.project('docs-team/site/handbook').branches.add(branch);
    const flaky = flakyFetch();
    const mr = await host(SECRETS.gitlab, { ...FAST, fetch: flaky.fetch }).ensurePullRequest(prInput(branch));
    assert.equal(mr.created, true);
    assert.equal(flaky.state.calls, 3);
  });

  test('git uses oauth2 with the token; requests carried PRIVATE-TOKEN and documented parameters only', async () => {
    assert.deepEqual(await host().gitRemote(), { url: `${repository}.git`, env: {} });
    assert.deepEqual(await host().gitCredentials(), {
      username: GITLAB_GIT_USERNAME,
      token: SECRETS.gitlab,
    });
    assert.ok(gitlab.authSchemes.length > 5);
    assert.ok(gitlab.authSchemes.every((s) => s === 'private-token'));
    assert.deepEqual(gitlab.violations, []);
  });
});

describe('Gitea host', () => {
  let gitea: GiteaApi;
  const repository = 'http://gitea.local/octo/docs';
  const host = (token = SECRETS.gitea): ApiCodeHost =>
    createGiteaHost({ repository, apiUrl: `${gitea.origin}/api/v1` }, { token }, FAST);

  before(async () => {
    gitea = await startGiteaApi({
      tokens: {
        [SECRETS.gitea]: { login: 'docs-bot', push: true },
        [SECRETS.giteaReadOnly]: { push: false },
      },
    });
    gitea.addRepo('octo/docs', { labels: ['bug', 'Docs', 'automated'] });
  });
  after(() => gitea.close());

  test('the API base is <origin>/api/v1 (sub-paths kept) or apiUrl', () => {
    assert.equal(
      giteaApiBase({ repository: 'https://codeberg.org/o/r', apiUrl: null }),
      'https://codeberg.org/api/v1',
    );
    assert.equal(
      giteaApiBase({ repository: 'https://corp.example/git/o/r', apiUrl: null }),
      'https://corp.example/git/api/v1',
    );
    assert.equal(
      giteaApiBase({ repository: 'https://x.example/o/r', apiUrl: 'https://y.example/' }),
      'https://y.example/api/v1',
    );
  });

  test('opens a pull request with WIP: for a draft and the labels by id, skipping unknown ones with a note', async () => {
    const branch = nextBranch();
    gitea.repo('octo/docs').branches.add(branch);
    const input = prInput(branch, { labels: ['docs', 'automated', 'no-such-label'] });
    const pr = await host().ensurePullRequest(input);
    assert.equal(pr.created, true);
    assert.deepEqual(pr.notes, ['label "no-such-label" does not exist in octo/docs; skipped']);
    const repo = gitea.repo('octo/docs');
    const pull = repo.pulls.find((p) => p.number === pr.number);
    assert.ok(pull);
    assert.equal(pr.url, `${gitea.origin}/octo/docs/pulls/${pr.number}`);
    assert.equal(pull.title, `WIP: ${input.title}`);
    assert.equal(pull.body, input.body);
    assert.equal(pull.head, branch);
    assert.equal(pull.base, 'main');
    const names = pull.labels.map((id) => repo.labels.find((l) => l.id === id)?.name);
    assert.deepEqual(names, ['Docs', 'automated']);
  });

  test('a pull request link that is not http(s) fails as pr-create-failed, when created and when found', async () => {
    const branch = nextBranch();
    gitea.repo('octo/docs').branches.add(branch);
    await refusesHostileLink(
      createGiteaHost(
        { repository, apiUrl: `${gitea.origin}/api/v1` },
        { token: SECRETS.gitea },
        { ...FAST, fetch: hostileLinks },
      ),
      branch,
    );
    assert.equal(gitea.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('a second call for the same branch returns the open pull request', async () => {
    const branch = nextBranch();
    gitea.repo('octo/docs').branches.add(branch);
    const first = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    const again = await host().ensurePullRequest(prInput(branch));
    assert.deepEqual(again, { ...first, created: false });
    assert.equal(gitea.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('409 on create (a race) is success with the existing pull request', async () => {
    const branch = nextBranch();
    gitea.repo('octo/docs').branches.add(branch);
    const winner = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    gitea.answerNext({ method: 'GET', path: /\/pulls$/ }, { status: 200, body: [] });
    const before = gitea.requests.length;
    const pr = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    assert.deepEqual(pr, { ...winner, created: false });
    assert.equal(gitea.requests.slice(before).filter((r) => r.method === 'POST').length, 1);
    assert.equal(gitea.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('409 followed by a lookup that misses (a lagging list) looks again', async () => {
    const branch = nextBranch();
    gitea.repo('octo/docs').branches.add(branch);
    const winner = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    gitea.answerNext({ method: 'GET', path: /\/pulls$/ }, { status: 200, body: [] });
    gitea.answerNext({ method: 'GET', path: /\/pulls$/ }, { status: 200, body: [] });
    const pr = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    assert.deepEqual(pr, { ...winner, created: false });
    assert.equal(gitea.repo('octo/docs').pulls.filter((p) => p.head === branch).length, 1);
  });

  test('401 is host-auth-failed; 403 is host-permission-denied; a missing branch is ref-not-found', async () => {
    const auth = await hostError(host(SECRETS.wrong).ensurePullRequest(prInput(nextBranch())));
    assert.equal(auth.code, 'host-auth-failed');
    const branch = nextBranch();
    gitea.repo('octo/docs').branches.add(branch);
    const denied = await hostError(
      host(SECRETS.giteaReadOnly).ensurePullRequest(prInput(branch, { labels: [] })),
    );
    assert.equal(denied.code, 'host-permission-denied');
    const missing = await hostError(
      host().ensurePullRequest(prInput('docwright/not-pushed', { labels: [] })),
    );
    assert.equal(missing.code, 'ref-not-found');
  });

  test('a 502 is retried, then the pull request opens', async () => {
    const branch = nextBranch();
    gitea.repo('octo/docs').branches.add(branch);
    gitea.failNext(502, {}, { method: 'POST' });
    const before = gitea.requests.length;
    const pr = await host().ensurePullRequest(prInput(branch, { labels: [] }));
    assert.equal(pr.created, true);
    assert.equal(gitea.requests.slice(before).filter((r) => r.method === 'POST').length, 2);
  });

  test('defaultBranch is the repository’s, as Gitea reports it', async () => {
    gitea.addRepo('octo/trunk-based', { defaultBranch: 'trunk' });
    const trunk = createGiteaHost(
      { repository: 'http://gitea.local/octo/trunk-based', apiUrl: `${gitea.origin}/api/v1` },
      { token: SECRETS.gitea },
      FAST,
    );
    assert.equal(await trunk.defaultBranch(), 'trunk');
    assert.equal(await host().defaultBranch(), 'main');
  });

  test('checkAccess reports push permission', async () => {
    const writer = await host().checkAccess();
    assert.deepEqual([writer.read, writer.push], [true, true], writer.detail);
    const reader = await host(SECRETS.giteaReadOnly).checkAccess();
    assert.deepEqual([reader.read, reader.push], [true, false]);
    const wrong = await host(SECRETS.wrong).checkAccess();
    assert.match(wrong.detail, /^host-auth-failed/);
    assertNoSecret(`${writer.detail}${reader.detail}${wrong.detail}`);
  });

  test('requests go through the injected fetch; a network error is retried', async () => {
    const branch = nextBranch();
    gitea.repo('octo/docs').branches.add(branch);
    const flaky = flakyFetch();
    const pr = await createGiteaHost(
      { repository, apiUrl: `${gitea.origin}/api/v1` },
      { token: SECRETS.gitea },
      { ...FAST, fetch: flaky.fetch },
    ).ensurePullRequest(prInput(branch, { labels: [] }));
    assert.equal(pr.created, true);
    assert.equal(flaky.state.calls, 3);
  });

  test('requests used Authorization: token and documented fields only', async () => {
    assert.deepEqual(await host().gitRemote(), { url: `${repository}.git`, env: {} });
    assert.ok(
      gitea.requests
        .filter((r) => r.headers.authorization?.includes(SECRETS.gitea))
        .every((r) => r.headers.authorization === `token ${SECRETS.gitea}`),
    );
    assert.deepEqual(gitea.violations, []);
  });
});

describe('createHost', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'docwright-hosts-'));
    execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('chooses the implementation by project.host', () => {
    const kinds = (['github', 'gitlab', 'gitea'] as const).map(
      (kind) => createHost({ host: kind, repository: 'https://example.com/o/r', apiUrl: null }, {}).kind,
    );
    assert.deepEqual(kinds, ['github', 'gitlab', 'gitea']);
  });

  test('local pushes to the repository itself and opens no pull request', async () => {
    const repository = pathToFileURL(dir).href;
    const host = createHost({ host: 'local', repository, apiUrl: null }, {});
    assert.equal(host.kind, 'local');
    assert.deepEqual(await host.gitRemote(), { url: repository, env: {} });
    assert.equal(await host.ensurePullRequest(prInput('docwright/local001')), null);
    assert.equal(await host.defaultBranch(), 'main');
    const access = await host.checkAccess();
    assert.deepEqual([access.read, access.push], [true, true], access.detail);
    const gone = await createHost(
      { host: 'local', repository: `${repository}-gone`, apiUrl: null },
      {},
    ).checkAccess();
    assert.equal(gone.read, false);
  });
});

test('no error message or error object carried a secret', () => {
  assert.ok(seenErrors.length >= 15);
  for (const error of seenErrors) assertNoSecret(error);
});
