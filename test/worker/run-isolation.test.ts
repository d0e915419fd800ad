/**
 * Each run's agent executes in a process of its own (issue 9): whatever the model makes it do,
 * the server keeps answering, and a run that goes too far is stopped with a clear code. Real
 * processes: `docwright serve`, its agent processes, the scripted OpenAI-compatible model.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { after, afterEach, before, describe, test } from 'node:test';
import { type ScriptedServer, startOpenAIServer, toolCall, toolCalls } from '../doubles/openai-server.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

/** Child processes of `pid` (the agent processes of a server). */
const childrenOf = (pid: number): number[] => {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
};

/** The one child process of `pid`, if it has exactly one. */
const onlyChild = (pid: number): number | undefined => {
  const children = childrenOf(pid);
  return children.length === 1 ? children[0] : undefined;
};
const alive = (pid: number): boolean => existsSync(`/proc/${pid}`);

/** Polls /healthz every 25 ms until stopped; the slowest answer is what a stall would show. */
function watchHealth(url: string) {
  let slowest = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return slowest;
    },
  };
}

describe(`run isolation on ${testDialect}`, () => {
  let t: TestApp;
  let model: ScriptedServer;
  let server: ServerProcess | undefined;
  const repos: string[] = [];

  before(async () => {
    t = await startTestApp();
  });
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
    await model?.close();
  });
  after(async () => {
    await t.close();
    for (const repo of repos) rmSync(repo, { recursive: true, force: true });
  });

  /** A local project whose model is a fresh scripted double (`model`); returns its id and repository. */
  async function project(files: Record<string, string> = {}) {
    model = await startOpenAIServer();
    const repository = createGitRepository({ 'index.md': '# Home\n', ...files });
    repos.push(repository);
    const created = await t.app.projects.create({
      name: 'Docs',
      repository,
      model: 'openai-compatible/scripted',
      openaiCompatibleBaseUrl: model.url,
      writable: ['**/*.md', '**/*.mdx'],
      rateLimit: 1000,
    });
    return { projectId: created.id, repository };
  }

  async function start(env: Record<string, string> = {}) {
    server = await startServerProcess({ ...t.database.env, ...env });
    return server;
  }

  const ended = (projectId: string, id: string) =>
    waitFor(
      async () => {
        const job = await t.app.jobs.get(projectId, id);
        return job.status === 'active' ? undefined : job;
      },
      { timeoutMs: 60_000, message: () => `job still active\n${server?.output()}` },
    );

  test('the attacks that stalled the server run beside it: /healthz keeps answering, the job completes', async () => {
    const crafted = `${'a'.repeat(30_000)}!\n`;
    const { projectId, repository } = await project({
      [`${'a'.repeat(26)}x.txt`]: 'x\n',
      'crafted.md': crafted,
    });
    const { url } = await start();
    model.push(
      toolCall('list_files', { glob: '**/*(a*)*(a*)*(a*)c' }),
      toolCalls(...Array.from({ length: 15 }, () => ({ name: 'search', input: { pattern: '^(a+)+$' } }))),
      toolCalls(
        ...Array.from({ length: 20_000 }, (_, i) => ({
          name: 'write_file',
          input: { path: `many/p${i}.md`, content: 'x\n' },
        })),
      ),
      toolCall('finish', { title: 'Many pages', summary: 'Adds pages.' }),
    );
    const health = watchHealth(url);
    const id = (await t.app.jobs.create(projectId, { prompt: 'Attack' })).job.id;
    const job = await ended(projectId, id);
    const slowest = await health.stop();
    assert.equal(job.status, 'completed', JSON.stringify(job.error));
    // Before: 27 s, 75 s and 7 s of a blocked event loop. A liveness bound, not a benchmark.
    assert.ok(slowest < 1_000, `/healthz took ${Math.round(slowest)} ms`);
    const events = await t.app.jobs.events(projectId, id, {});
    const types = events.map((e) => e.type);
    assert.ok(types.length < 200, `${types.length} events`);
    assert.equal(types.filter((type) => type === 'agent.tool_calls_skipped').length, 1);
    const branch = `docwright/${id.slice(-8)}`;
    const changed = execFileSync('git', ['diff', '--name-only', `main..${branch}`], {
      cwd: repository,
      encoding: 'utf8',
    })
      .trim()
      .split('\n');
    assert.equal(changed.length, 50, 'only the calls within the per-turn limit ran');
  });

  test('a run that exceeds its memory is stopped with memory-limit-exceeded; the server lives on', async () => {
    const { projectId } = await project();
    const server = await start({ DOCWRIGHT_RUN_MEMORY_MB: '96' });
    const big = 'x'.repeat(2 * 1024 * 1024);
    const heavyTurn = () =>
      toolCalls(
        ...Array.from({ length: 25 }, (_, i) => ({
          name: 'write_file',
          input: { path: `b${i}.md`, content: big },
        })),
      );
    model.push(heavyTurn(), heavyTurn(), heavyTurn(), heavyTurn());
    const id = (await t.app.jobs.create(projectId, { prompt: 'Grow' })).job.id;
    const job = await ended(projectId, id);
    assert.equal(job.status, 'failed');
    assert.equal(job.error?.code, 'memory-limit-exceeded');
    assert.equal(job.error?.message, 'the run used more than its 96 MiB of memory and was stopped');
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  });

  test('a process that stops answering (a long validation) is killed with tool-time-limit-exceeded', async () => {
    const { projectId } = await project();
    await start({ DOCWRIGHT_RUN_UNRESPONSIVE_SECONDS: '1' });
    // Compiling this MDX takes the agent's process seconds of synchronous work.
    const slow = Array.from({ length: 20_000 }, (_, i) => `<Card title="t${i}">x **b** [l](u)</Card>`).join(
      '\n\n',
    );
    model.push(
      toolCall('write_file', { path: 'slow.mdx', content: slow }),
      toolCall('finish', { title: 'Slow', summary: 'A slow page.' }),
    );
    const id = (await t.app.jobs.create(projectId, { prompt: 'Slow' })).job.id;
    const job = await ended(projectId, id);
    assert.equal(job.status, 'failed');
    assert.equal(job.error?.code, 'tool-time-limit-exceeded');
    assert.match(job.error!.message, /did not respond for 1 s/);
  });

  test('archiving a job stops its agent process at once, even in the middle of synchronous work', async () => {
    const { projectId } = await project();
    const { child } = await start();
    const slow = Array.from({ length: 20_000 }, (_, i) => `<Card title="t${i}">x</Card>`).join('\n\n');
    model.push(
      toolCall('write_file', { path: 'slow.mdx', content: slow }),
      toolCall('finish', { title: 'Slow', summary: 'A slow page.' }),
    );
    const id = (await t.app.jobs.create(projectId, { prompt: 'Slow' })).job.id;
    await waitFor(
      async () => (await t.app.jobs.events(projectId, id, {})).some((e) => e.type === 'agent.tool_result'),
      { timeoutMs: 20_000 },
    );
    // The server's first run: its agent process is the server's only child.
    const agent = await waitFor(async () => onlyChild(child.pid!), {
      timeoutMs: 5_000,
    });
    const archivedAt = Date.now();
    await t.app.jobs.archive(projectId, id);
    await waitFor(async () => !alive(agent) || undefined, { timeoutMs: 5_000 });
    assert.ok(Date.now() - archivedAt < 5_000, 'docs/worker.mdx: within 5 seconds');
    assert.equal((await t.app.jobs.get(projectId, id)).status, 'archived');
  });

  test('the agent process gets no secret of the server in its environment', async () => {
    const { projectId } = await project();
    const { child } = await start({
      OPENAI_API_KEY: 'sk-server-secret-1234',
      DOCWRIGHT_ADMIN_PASSWORD: 'admin-secret-12345',
    });
    const slow = Array.from({ length: 8_000 }, (_, i) => `<Card title="t${i}">x</Card>`).join('\n\n');
    model.push(
      toolCall('write_file', { path: 'slow.mdx', content: slow }),
      toolCall('finish', { title: 'Slow', summary: 'A slow page.' }),
    );
    const id = (await t.app.jobs.create(projectId, { prompt: 'Env' })).job.id;
    const pid = await waitFor(async () => childrenOf(child.pid!)[0], { timeoutMs: 20_000 });
    const environ = execFileSync('cat', [`/proc/${pid}/environ`], { encoding: 'utf8' });
    assert.doesNotMatch(environ, /sk-server-secret|admin-secret|DOCWRIGHT_SECRET_KEY|DATABASE_URL/);
    assert.match(environ, /PATH=/);
    await ended(projectId, id);
  });

  test('after a run, the next run’s process waits ready: the next run uses it once; it holds no secret and ends with the server', async () => {
    const { projectId } = await project();
    const { child } = await start({ OPENAI_API_KEY: 'sk-server-secret-1234' });
    const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8');
    model.push(
      toolCall('write_file', { path: 'a.md', content: '# A\n' }),
      toolCall('finish', { title: 'A', summary: 'A page.' }),
    );
    const first = (await t.app.jobs.create(projectId, { prompt: 'A' })).job.id;
    assert.equal((await ended(projectId, first)).status, 'completed');
    const spare = await waitFor(async () => onlyChild(child.pid!), {
      timeoutMs: 10_000,
      message: 'a spare agent process after the run',
    });
    assert.doesNotMatch(environOf(spare), /sk-server-secret|DOCWRIGHT_SECRET_KEY|DATABASE_URL/);

    // A page that takes a while to validate: the run is caught with its agent at work.
    const slow = Array.from({ length: 8_000 }, (_, i) => `<Card title="t${i}">x</Card>`).join('\n\n');
    model.push(
      toolCall('write_file', { path: 'slow.mdx', content: slow }),
      toolCall('finish', { title: 'Slow', summary: 'A slow page.' }),
    );
    const second = (await t.app.jobs.create(projectId, { prompt: 'Slow' })).job.id;
    await waitFor(
      async () =>
        (await t.app.jobs.events(projectId, second, {})).some((e) => e.type === 'agent.tool_result'),
      { timeoutMs: 20_000 },
    );
    assert.deepEqual(
      childrenOf(child.pid!),
      [spare],
      'the run is carried out by the spare, no other process',
    );
    assert.equal((await ended(projectId, second)).status, 'completed');
    assert.equal(alive(spare), false, 'a spare is used for one run only');
    const next = await waitFor(async () => onlyChild(child.pid!), {
      timeoutMs: 10_000,
    });
    assert.notEqual(next, spare);

    assert.equal(await server!.stop('SIGTERM'), 0);
    server = undefined;
    await waitFor(async () => !alive(next) || undefined, {
      timeoutMs: 5_000,
      message: 'the spare to end with the server',
    });
  });
});
