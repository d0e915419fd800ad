// Mintlify's v1 agent API (docs/api/mintlify-v1.mdx) as its published clients use it, against a `docwright
// serve` process on the scripted model, pushing to a smart-HTTP git server with the GitHub API
// double: a GitHub-script-style create that prints the stream line by line, an n8n-style create
// that reads only the X-Session-Id header and hangs up, and get/list in the v1 shapes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const MODEL_KEY = 'sk-v1ModelKey0123456789abcdef';
const FILES = {
  'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
  'index.mdx': '---\ntitle: Home\n---\n\nWelcome to the API.\n',
};

interface Session {
  sessionId: string;
  subdomain: string;
  branch: string | null;
  haulted: boolean;
  haultReason: string;
  pullRequestLink: string | null;
  messageToUser: string | null;
  todos: unknown[];
  userId: null;
  title: string;
  createdAt: string;
}

describe('Mintlify v1 compatibility through a docwright serve process', () => {
  let t: TestApp;
  let hosted: HostedRepository;
  let model: ScriptedServer;
  let server: ServerProcess;
  let projectId: string;
  let key: string;
  /** The head branch the first test's job created (a later job continues it). */
  let createdBranch: string;
  /** That job's pull request. */
  let createdPrLink: string;

  const v1 = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/v1/agent/${projectId}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers },
    });
  const v2Job = async (id: string) =>
    (await (
      await fetch(`${server.url}/v2/agent/${projectId}/job/${id}`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).json()) as {
      status: string;
      prLink: string | null;
      branch: string | null;
      model: string;
      summary: string;
    };

  before(async () => {
    [t, hosted, model] = await Promise.all([
      startTestApp(),
      startHostedRepository('github', FILES),
      startOpenAIServer({ apiKey: MODEL_KEY }),
    ]);
    const project = await t.app.projects.create({
      name: 'Acme Docs',
      repository: hosted.repository,
      host: 'github',
      apiUrl: hosted.apiUrl,
      token: hosted.token,
      ref: 'main',
      openaiCompatibleBaseUrl: model.url,
      openaiCompatibleApiKey: MODEL_KEY,
      rateLimit: 1000,
    });
    projectId = project.id;
    key = (await t.app.keys.create(projectId)).key;
    server = await startServerProcess({ ...t.database.env, DOCWRIGHT_MODEL: 'openai-compatible/scripted' });
  });
  after(async () => {
    await server?.stop();
    await Promise.all([t?.close(), hosted?.close(), model?.close()]);
  });

  test('a GitHub-script-style create streams the run as an AI SDK UI message stream and opens the PR on the named branch', async () => {
    model.push(
      { text: 'Looking at the home page.', toolCalls: [{ name: 'read_file', input: { path: 'index.mdx' } }] },
      toolCall('edit_file', {
        path: 'index.mdx',
        old_string: 'Welcome to the API.',
        new_string: 'Welcome to the Acme API.',
      }),
      toolCall('read_file', { path: 'missing.mdx' }),
      toolCall('finish', { title: 'Name the API', summary: 'Names the Acme API on the home page.' }),
    );
    const branch = `mintlify/docs-update-${Date.now()}`;
    createdBranch = branch;
    // As in Mintlify's published GitHub Actions recipe (actions/github-script).
    const response = await v1('/job', {
      method: 'POST',
      body: JSON.stringify({
        branch,
        messages: [
          {
            role: 'system',
            content: 'You are an action runner that updates documentation. Never ask questions.',
          },
          {
            role: 'user',
            content: 'Update the documentation for our recent pushes to main:\n\nRepository: acme/api',
          },
        ],
      }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(response.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
    assert.equal(response.headers.get('x-branch-name'), branch);
    const sessionId = response.headers.get('x-session-id')!;
    assert.match(sessionId, /^job_/);
    assert.match(response.headers.get('ratelimit') ?? '', /^"create";r=\d+;t=\d+$/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const lines: string[] = [];
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const parts = buffer.split('\n');
      buffer = parts.pop() || '';
      for (const line of parts) if (line.trim()) lines.push(line);
    }
    if (buffer.trim()) lines.push(buffer);

    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    assert.equal(data.at(-1), '[DONE]', 'the stream ends with [DONE] when the run ends');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as UIMessageChunk);
    assert.deepEqual(chunks[0], { type: 'start', messageId: sessionId });
    assert.equal(chunks.at(-1)!.type, 'finish');
    // The AI SDK's own reader accepts the stream and builds the assistant message from it.
    let message: UIMessage | undefined;
    for await (const m of readUIMessageStream({
      stream: new ReadableStream<UIMessageChunk>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        },
      }),
      terminateOnError: true,
    })) {
      message = m;
    }
    const parts = message!.parts;
    const texts = parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);
    assert.ok(texts.includes('Looking at the home page.'), JSON.stringify(texts));
    const tools = parts.filter((p) => p.type.startsWith('tool-')) as unknown as {
      type: string;
      state: string;
      input: { path: string };
      errorText?: string;
    }[];
    assert.deepEqual(
      tools.map((p) => [p.type, p.input.path, p.state]),
      [
        ['tool-read_file', 'index.mdx', 'output-available'],
        ['tool-edit_file', 'index.mdx', 'output-available'],
        ['tool-read_file', 'missing.mdx', 'output-error'],
        ['tool-finish', undefined, 'output-available'],
      ],
    );
    const job = await v2Job(sessionId);
    assert.equal(job.status, 'completed', 'the stream ended with the run');
    assert.equal(job.branch, branch, '`branch` names the head branch');
    const pulls = hosted.pulls();
    assert.equal(pulls.length, 1);
    assert.equal(pulls[0]!.head, branch);
    assert.equal(pulls[0]!.draft, true, 'asDraft defaults to true, as in v1');
    assert.match(job.prLink ?? '', hosted.pullUrl(pulls[0]!));
    createdPrLink = job.prLink!;
    assert.ok(texts.at(-1)!.includes(`Pull request: ${job.prLink}`), 'the outcome closes the message');
    assert.match(hosted.git.git(hosted.name, 'show', `${branch}:index.mdx`), /Welcome to the Acme API\./);
    const [instruction] = model.requests.map((r) => JSON.stringify(r.body.messages));
    assert.match(instruction!, /recent pushes to main[\s\S]*Guidance:[\s\S]*Never ask questions/);
  });

  test('an n8n-style create that reads only X-Session-Id and hangs up leaves the job running to the end', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }, { delayMs: 1_500 }),
      toolCall('finish', { title: 'Checked', summary: 'The home page is current.' }),
    );
    const response = await v1('/job', {
      method: 'POST',
      body: JSON.stringify({
        // n8n's recipe puts $now.toISOString() in the branch; git forbids its ':'.
        branch: 'docs-update-2025-01-01T12:00:00.000Z',
        messages: [{ role: 'system', content: 'Update documentation for changes pushed to main in api.' }],
        asDraft: false,
        model: 'opus',
      }),
    });
    const sessionId = response.headers.get('x-session-id')!;
    assert.equal(response.headers.get('x-branch-name'), 'docs-update-2025-01-01T12-00-00.000Z');
    await response.body!.cancel();
    const session = await waitFor(
      async () => {
        const r = await v1(`/job/${sessionId}`);
        assert.equal(r.status, 200);
        const s = (await r.json()) as Session;
        return s.haulted ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(Object.keys(session).sort(), [
      'branch',
      'createdAt',
      'haultReason',
      'haulted',
      'messageToUser',
      'pullRequestLink',
      'sessionId',
      'subdomain',
      'title',
      'todos',
      'userId',
    ]);
    assert.equal(session.sessionId, sessionId);
    assert.equal(session.haultReason, 'completed');
    assert.equal(session.subdomain, 'acme-docs');
    assert.equal(session.branch, 'docs-update-2025-01-01T12-00-00.000Z');
    assert.equal(session.pullRequestLink, null, 'nothing changed, so no pull request');
    assert.equal(session.messageToUser, 'The home page is current.');
    assert.equal(session.title, 'Update documentation for changes pushed to main in api.');
    assert.deepEqual(session.todos, []);
    assert.equal(session.userId, null);
    const job = await v2Job(sessionId);
    assert.equal(job.model, 'openai-compatible/scripted', 'opus means the project’s model');
  });

  /** Every branch of the hosted repository with its tip, and the number of jobs of the project. */
  const snapshot = async () => ({
    refs: hosted.git.git(hosted.name, 'for-each-ref', '--format=%(refname) %(objectname)'),
    jobs: ((await (await v1('/jobs?take=100')).json()) as { allSessions: unknown[] }).allSessions.length,
    pulls: hosted.pulls().length,
  });
  const create = (body: object, project = projectId) =>
    fetch(`${server.url}/v1/agent/${project}/job`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Update the docs' }], ...body }),
    });

  test('a branch that is the job’s base or the repository’s default branch gets 400 before anything is created or pushed', async () => {
    const before = await snapshot();
    const asked = model.requests.length;
    const base = await create({ branch: 'main' });
    assert.equal(base.status, 400);
    const problem = (await base.json()) as { code: string; error: string; errors: { field: string }[] };
    assert.equal(problem.code, 'invalid-request');
    assert.match(problem.error, /never pushes to main: it is the job's base branch/);
    assert.deepEqual(
      problem.errors.map((f) => f.field),
      ['branch'],
    );

    // A project that works from `develop`: `main` is not its base, but it is the repository's default branch.
    hosted.git.git(hosted.name, 'branch', 'develop', 'main');
    const develop = await t.app.projects.create({
      name: 'Acme Develop',
      repository: hosted.repository,
      host: 'github',
      apiUrl: hosted.apiUrl,
      token: hosted.token,
      ref: 'develop',
      openaiCompatibleBaseUrl: model.url,
      openaiCompatibleApiKey: MODEL_KEY,
    });
    const developKey = (await t.app.keys.create(develop.id)).key;
    const defaultBranch = await fetch(`${server.url}/v1/agent/${develop.id}/job`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${developKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ branch: 'main', messages: [{ role: 'user', content: 'Update the docs' }] }),
    });
    assert.equal(defaultBranch.status, 400);
    assert.match(
      ((await defaultBranch.json()) as { error: string }).error,
      /never pushes to main: it is the repository's default branch/,
    );
    const jobsOfDevelop = await t.app.jobs.list(develop.id, {});
    assert.deepEqual(jobsOfDevelop.jobs, []);
    hosted.git.git(hosted.name, 'branch', '-D', 'develop');
    assert.deepEqual(await snapshot(), before, 'no job, no push, no pull request');
    assert.equal(model.requests.length, asked, 'the model was not asked');
  });

  test('an existing branch docwright did not create gets 409 branch-exists, and nothing is created', async () => {
    hosted.git.git(hosted.name, 'branch', 'feature/theirs', 'main');
    const before = await snapshot();
    const response = await create({ branch: 'feature/theirs' });
    assert.equal(response.status, 409);
    const problem = (await response.json()) as { code: string; error: string };
    assert.equal(problem.code, 'branch-exists');
    assert.match(problem.error, /feature\/theirs already exists and docwright did not create it/);
    assert.deepEqual(await snapshot(), before);
  });

  test('a branch docwright created for an earlier job of the project is continued: fast-forward, the same pull request', async () => {
    const before = hosted.git.git(hosted.name, 'rev-parse', createdBranch).trim();
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', {
        path: 'index.mdx',
        old_string: 'Welcome to the Acme API.',
        new_string: 'Welcome to the Acme API, version 2.',
      }),
      toolCall('finish', { title: 'Name the version', summary: 'Names the version.' }),
    );
    const response = await create({ branch: createdBranch });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-branch-name'), createdBranch);
    const id = response.headers.get('x-session-id')!;
    await response.text();
    const job = await v2Job(id);
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.equal(job.branch, createdBranch);
    const after = hosted.git.git(hosted.name, 'rev-parse', createdBranch).trim();
    assert.notEqual(after, before);
    assert.equal(
      hosted.git.git(hosted.name, 'rev-parse', `${after}~1`).trim(),
      before,
      'the branch was fast-forwarded by one commit',
    );
    assert.equal(job.prLink, createdPrLink, 'the open pull request is reused');
    assert.equal(hosted.pulls().filter((p) => p.head === createdBranch).length, 1);
  });

  test('list answers allSessions newest first, paged by skip and take', async () => {
    const all = (await (await v1('/jobs')).json()) as { allSessions: Session[] };
    assert.ok(all.allSessions.length >= 2);
    const dates = all.allSessions.map((s) => s.sessionId);
    assert.deepEqual(dates, [...dates].sort().reverse());
    const first = (await (await v1('/jobs?skip=0&take=1')).json()) as { allSessions: Session[] };
    const second = (await (await v1('/jobs?skip=1&take=1')).json()) as { allSessions: Session[] };
    assert.equal(first.allSessions[0]!.sessionId, all.allSessions[0]!.sessionId);
    assert.equal(second.allSessions[0]!.sessionId, all.allSessions[1]!.sessionId);
    for (const bad of ['take=0', 'take=101', 'skip=-1', 'take=x']) {
      const r = await v1(`/jobs?${bad}`);
      assert.equal(r.status, 400, bad);
      assert.match(((await r.json()) as { error: string }).error, /query\.(take|skip)/);
    }
  });

  test('bad requests get v2’s problem+json errors and create nothing', async () => {
    const before = (await (await v1('/jobs?take=100')).json()) as { allSessions: unknown[] };
    const cases: [unknown, RegExp][] = [
      // What no smoothing turns into a branch name.
      [{ branch: '..', messages: [{ role: 'user', content: 'x' }] }, /^branch is empty/],
      [{ branch: 'x'.repeat(501), messages: [{ role: 'user', content: 'x' }] }, /^invalid request: branch/],
      [{ messages: [] }, /messages must hold at least one message/],
      [{ messages: [{ role: 'robot', content: 'x' }] }, /messages\.0\.role/],
      [{ messages: [{ role: 'user', content: '   ' }] }, /messages hold no text/],
      [{ messages: [{ role: 'user', content: 'x' }], model: 'gpt-4' }, /model must be sonnet, opus/],
    ];
    for (const [body, error] of cases) {
      const r = await v1('/job', { method: 'POST', body: JSON.stringify(body) });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      const problem = (await r.json()) as { error: string; code: string };
      assert.equal(problem.code, 'invalid-request');
      assert.match(problem.error, error);
    }
    const unauthorized = await fetch(`${server.url}/v1/agent/${projectId}/job`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(unauthorized.status, 401);
    assert.equal(((await unauthorized.json()) as { code: string }).code, 'unauthorized');
    const missing = await v1('/job/job_01hzzzzzzzzzzzzzzzzzzzzzzz');
    assert.equal(missing.status, 404);
    const after = (await (await v1('/jobs?take=100')).json()) as { allSessions: unknown[] };
    assert.equal(after.allSessions.length, before.allSessions.length);
  });
});
