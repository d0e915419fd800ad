// End to end through real processes: `docwright serve` as a child process, jobs posted over
// HTTP, a scripted OpenAI-compatible model, pushes over git's smart-HTTP protocol to a server
// that requires the token, and the pull request opened on the code host's API double —
// for GitHub, GitLab and Gitea alike.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { HOST_KINDS, type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { mintlifySiteFiles, QUICKSTART_WELCOME } from '../helpers/mintlify-site.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { firstRun, runCheckouts, waitFor } from '../helpers/worker.ts';

const MODEL_KEY = 'sk-e2eModelKey0123456789abcdefXYZ';
const WELCOME = QUICKSTART_WELCOME;

/** Every file under `dir` as text, for secret scans. */
function allText(dir: string): string {
  let text = '';
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dir, entry);
    if (statSync(file, { throwIfNoEntry: false })?.isFile()) text += `${readFileSync(file, 'latin1')}\n`;
  }
  return text;
}

/** Every form of `token` a leak could take: raw, base64, and the Basic credential with any of the hosts' user names. */
const leakForms = (token: string) => [
  token,
  Buffer.from(token).toString('base64'),
  ...['x-access-token', 'oauth2', 'docwright'].map((user) =>
    Buffer.from(`${user}:${token}`).toString('base64'),
  ),
];

interface Job {
  id: string;
  status: string;
  prLink: string | null;
  branch: string | null;
  error?: unknown;
}

/** The v2 API over HTTP with a project key, as a caller uses it. */
function client(url: string, projectId: string, key: string) {
  const call = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${url}/v2/agent/${projectId}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await response.json()) as unknown;
    assert.ok(response.ok, `${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  return {
    create: async (prompt: string, options: { draft?: boolean } = {}) =>
      (await call('POST', '/job', { prompt, ...options })) as Job,
    message: async (id: string, prompt: string) =>
      (await call('POST', `/job/${id}/message`, { prompt })) as Job,
    get: async (id: string) => (await call('GET', `/job/${id}`)) as Job,
    events: async (id: string) => call('GET', `/job/${id}/events?limit=1000`),
    /** Polls until the job leaves `active`. */
    ended: (id: string, server: ServerProcess) =>
      waitFor(
        async () => {
          const job = (await call('GET', `/job/${id}`)) as Job;
          return job.status === 'active' ? undefined : job;
        },
        { timeoutMs: 60_000, message: () => server.output().slice(-4000) },
      ),
  };
}

/** The project, its key and a server process for `hosted`. */
async function setUp(
  t: TestApp,
  hosted: HostedRepository,
  model: ScriptedServer,
  env: Record<string, string>,
) {
  const project = await t.app.projects.create({
    name: `${hosted.kind} docs`,
    repository: hosted.repository,
    host: hosted.kind,
    apiUrl: hosted.apiUrl,
    token: hosted.token,
    ref: 'main',
    draft: true,
    labels: ['docs'],
    openaiCompatibleBaseUrl: model.url,
    openaiCompatibleApiKey: MODEL_KEY,
  });
  const { key } = await t.app.keys.create(project.id);
  const tmp = mkdtempSync(path.join(tmpdir(), 'docwright-e2e-tmp-'));
  const serverEnv = {
    ...t.database.env,
    DOCWRIGHT_MODEL: 'openai-compatible/scripted',
    DOCWRIGHT_LOG_LEVEL: 'debug',
    // The server's checkouts land here, so the test can scan them while they exist.
    TMPDIR: tmp,
    ...env,
  };
  return { projectId: project.id, key, tmp, serverEnv };
}

const checkouts = runCheckouts;

for (const kind of HOST_KINDS) {
  describe(`end to end on ${kind}: POST → agent → push → one pull request → follow-up`, () => {
    let t: TestApp;
    let hosted: HostedRepository;
    let model: ScriptedServer;
    let server: ServerProcess;
    let ctx: Awaited<ReturnType<typeof setUp>>;
    before(async () => {
      [t, hosted, model] = await Promise.all([
        startTestApp(),
        startHostedRepository(kind, mintlifySiteFiles()),
        startOpenAIServer({ apiKey: MODEL_KEY }),
      ]);
      ctx = await setUp(t, hosted, model, {});
      server = await startServerProcess(ctx.serverEnv);
    });
    after(async () => {
      await server?.stop();
      await Promise.all([t?.close(), hosted?.close(), model?.close()]);
      if (ctx) rmSync(ctx.tmp, { recursive: true, force: true });
    });

    test('the job completes with the PR link, the branch holds exactly the edit, a follow-up adds a commit to the same PR, and the token is nowhere', async () => {
      const api = client(server.url, ctx.projectId, ctx.key);
      model.push(
        toolCall('read_file', { path: 'quickstart.mdx', limit: 20 }),
        toolCall('edit_file', {
          path: 'quickstart.mdx',
          old_string: WELCOME,
          new_string: WELCOME.replace('customize and update.', 'customize, update and share.'),
        }),
        toolCall('finish', {
          title: 'Mention sharing in the quickstart',
          summary: 'Adds sharing to the intro.',
        }),
      );
      // Stop the pull request on its way to see the checkout while it exists.
      const held = hosted.api.hold({ method: 'POST', path: /\/(pulls|merge_requests)$/ }, 'before');
      // The project asks for drafts; on Gitea the request overrides it.
      const draft = kind !== 'gitea';
      const created = await api.create('Say that the site can be shared', draft ? {} : { draft: false });
      // The run reaches the held request, unless it fails first: then say why instead of waiting forever.
      let arrived = false;
      void held.request.then(() => {
        arrived = true;
      });
      const first = await waitFor(
        async () => {
          if (arrived) return 'held';
          const job = await api.get(created.id);
          return job.status === 'active' ? undefined : job;
        },
        { timeoutMs: 60_000, message: () => server.output().slice(-4000) },
      );
      assert.equal(first, 'held', `the job ended before its pull request: ${JSON.stringify(first)}`);
      const [checkout] = checkouts(ctx.tmp);
      assert.ok(checkout, 'the run works in its own temporary checkout');
      assert.ok(existsSync(path.join(ctx.tmp, checkout, 'docs.json')));
      const checkoutText = allText(path.join(ctx.tmp, checkout));
      held.release();

      const done = await api.ended(created.id, server);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      const pulls = hosted.pulls();
      assert.equal(pulls.length, 1);
      const [pull] = pulls;
      assert.match(done.prLink ?? '', hosted.pullUrl(pull!));
      assert.ok(done.branch?.startsWith('docwright/'));
      assert.equal(pull!.head, done.branch);
      assert.equal(pull!.base, 'main');
      assert.equal(pull!.title, 'Mention sharing in the quickstart');
      assert.equal(pull!.draft, draft);
      assert.deepEqual(pull!.labels, ['docs']);
      assert.match(
        pull!.body,
        /Adds sharing to the intro\.[\s\S]*Say that the site can be shared[\s\S]*job_/,
      );
      const branch = done.branch!;
      assert.equal(
        hosted.git.git(hosted.name, 'diff', '--name-only', `main..${branch}`).trim(),
        'quickstart.mdx',
      );
      assert.match(
        hosted.git.git(hosted.name, 'diff', `main..${branch}`),
        /^\+.*customize, update and share\.$/m,
      );
      await waitFor(() => checkouts(ctx.tmp).length === 0, {
        message: 'the checkout is removed after the run',
      });

      model.push(
        toolCall('read_file', { path: 'quickstart.mdx', offset: 10, limit: 1 }),
        toolCall('edit_file', {
          path: 'quickstart.mdx',
          old_string: 'update and share.',
          new_string: 'update and share with your team.',
        }),
        toolCall('finish', { title: 'Share with the team', summary: 'Names who to share with.' }),
      );
      await api.message(done.id, 'Say who to share it with');
      const again = await api.ended(done.id, server);
      assert.equal(again.status, 'completed', JSON.stringify(again.error));
      assert.equal(again.prLink, done.prLink, 'the same pull request');
      assert.equal(again.branch, branch);
      assert.equal(hosted.pulls().length, 1, 'no second pull request');
      assert.deepEqual(
        hosted.git.git(hosted.name, 'log', '--format=%s', `main..${branch}`).trim().split('\n'),
        ['Share with the team', 'Mention sharing in the quickstart'],
      );
      assert.deepEqual(hosted.violations(), []);

      // The token travelled only in git's Authorization header and the host API's.
      const places: Record<string, string> = {
        'server logs': server.output(),
        'job records and events': JSON.stringify([done, again, await api.events(done.id)]),
        'model requests': JSON.stringify(model.requests),
        'git URLs': hosted.git.requests.map((r) => r.url).join('\n'),
        'the checkout': checkoutText,
        'the pushed repository': allText(path.join(hosted.git.root, `${hosted.name}.git`)),
      };
      for (const [place, text] of Object.entries(places)) {
        for (const form of leakForms(hosted.token)) assert.ok(!text.includes(form), `token in ${place}`);
      }
      for (const form of leakForms(MODEL_KEY))
        assert.ok(!places['server logs']!.includes(form), 'model key in logs');
      assert.match(places['server logs']!, /"msg":"run started"/, 'the scan saw the run’s debug-level logs');
    });
  });
}

describe('a crash between the push and the pull request', () => {
  let t: TestApp;
  let hosted: HostedRepository;
  let model: ScriptedServer;
  const servers: ServerProcess[] = [];
  let ctx: Awaited<ReturnType<typeof setUp>>;
  before(async () => {
    [t, hosted, model] = await Promise.all([
      startTestApp(),
      startHostedRepository('github', {
        'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } }, null, 2)}\n`,
        'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
      }),
      startOpenAIServer({ apiKey: MODEL_KEY }),
    ]);
    // A one-second lease keeps the wait for the killed server's lease short.
    ctx = await setUp(t, hosted, model, { DOCWRIGHT_LEASE_SECONDS: '1' });
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await Promise.all([t?.close(), hosted?.close(), model?.close()]);
    if (ctx) rmSync(ctx.tmp, { recursive: true, force: true });
  });

  /**
   * Runs a job until its pull request is held in `phase`, SIGKILLs the server, then
   * lets a second server retry the run. Returns the finished job.
   */
  async function crashAtPullRequest(phase: 'before' | 'after', line: string) {
    const first = await startServerProcess(ctx.serverEnv);
    servers.push(first);
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', { path: 'index.mdx', old_string: 'Welcome.', new_string: line }),
      toolCall('finish', { title: `Say ${line}`, summary: 'A new welcome line.' }),
    );
    const held = hosted.api.hold({ method: 'POST', path: /\/pulls$/ }, phase);
    const api = client(first.url, ctx.projectId, ctx.key);
    const { id } = await api.create(`Welcome readers with "${line}"`);
    await held.request;
    await first.stop('SIGKILL');
    held.release();

    // The retry finds the edit already on the branch; the model has nothing left to change.
    model.push(toolCall('finish', { title: `Say ${line}`, summary: 'A new welcome line.' }));
    const second = await startServerProcess(ctx.serverEnv);
    servers.push(second);
    const done = await client(second.url, ctx.projectId, ctx.key).ended(id, second);
    await second.stop();
    return done;
  }

  for (const phase of ['before', 'after'] as const) {
    const what =
      phase === 'before' ? 'before the host saw the request' : 'after the host opened it, before the answer';
    test(`killed ${what}: the retry still ends with exactly one pull request`, async () => {
      const before = hosted.pulls().length;
      const line = `Welcome, ${phase}.`;
      const done = await crashAtPullRequest(phase, line);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      const mine = hosted.pulls().filter((p) => p.head === done.branch);
      assert.equal(mine.length, 1, 'exactly one pull request for the branch');
      assert.equal(hosted.pulls().length, before + 1);
      assert.match(done.prLink ?? '', hosted.pullUrl(mine[0]!));
      assert.equal(
        Number((await firstRun(t.app, done.id)).attempts),
        2,
        'the run was retried after the crash',
      );
      assert.deepEqual(
        hosted.git.git(hosted.name, 'log', '--format=%s', `main..${done.branch}`).trim().split('\n'),
        [`Say ${line}`],
        'one commit: the retry pushed nothing new',
      );
      assert.deepEqual(hosted.violations(), []);
    });
  }
});
