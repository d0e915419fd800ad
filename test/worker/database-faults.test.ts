/**
 * A PostgreSQL that drops the server's connections while runs finish (issue 9, finding 3):
 * the process must not exit, and no job may fail for it. A real `docwright serve` whose
 * connections go through a proxy, so that exactly its backends are terminated.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  type RecordedRequest,
  type ScriptedServer,
  startOpenAIServer,
  toolCall,
} from '../doubles/openai-server.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { CuttableProxy, proxiedUrl, terminateBackends } from '../helpers/postgres-proxy.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const onlyPostgres =
  testDialect === 'postgres'
    ? false
    : 'skipped: backend termination is a PostgreSQL scenario (run with DOCWRIGHT_TEST_DB=postgres)';

describe('database faults under running jobs (PostgreSQL)', { skip: onlyPostgres }, () => {
  const proxy = new CuttableProxy();
  let t: TestApp;
  let model: ScriptedServer;
  let server: ServerProcess;
  let repository: string;

  before(async () => {
    t = await startTestApp();
    await proxy.open();
    model = await startOpenAIServer();
    repository = createGitRepository({ 'index.md': '# Home\n' });
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await model.close();
    await proxy.cut();
    await t.close();
    rmSync(repository, { recursive: true, force: true });
  });

  test('terminating the server’s backends again and again: it keeps serving and every job completes', async () => {
    const project = await t.app.projects.create({
      name: 'Docs',
      repository,
      model: 'openai-compatible/scripted',
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    const jobs = 8;
    // A run may be tried again (a released or requeued attempt): the model answers by the
    // conversation, not by the order of requests — write the page, then finish.
    const respond = (request: RecordedRequest) => {
      const messages: { role: string; content: unknown }[] = request.body.messages;
      const page = /Page (\d+)/.exec(JSON.stringify(messages.find((m) => m.role === 'user')?.content))![1];
      return messages.some((m) => m.role === 'tool')
        ? toolCall('finish', { title: `Page ${page}`, summary: 'Adds a page.' })
        : toolCall('write_file', { path: `page${page}.md`, content: `# Page ${page}\n` });
    };
    model.push(...Array.from({ length: 500 }, () => respond));
    server = await startServerProcess({
      ...t.database.env,
      DATABASE_URL: proxiedUrl(proxy),
      DOCWRIGHT_WORKER_CONCURRENCY: '2',
      DOCWRIGHT_LEASE_SECONDS: '10',
    });
    const ids: string[] = [];
    for (let i = 0; i < jobs; i++) {
      ids.push((await t.app.jobs.create(project.id, { prompt: `Page ${i}` })).job.id);
    }
    // Terminate every backend of the server every 40 ms while its runs claim, record and finish.
    let terminated = 0;
    let stop = false;
    const terminator = (async () => {
      while (!stop) {
        terminated += await terminateBackends(proxy);
        await new Promise((r) => setTimeout(r, 40));
      }
    })();
    try {
      await waitFor(
        async () => {
          const statuses = await Promise.all(
            ids.map(async (id) => (await t.app.jobs.get(project.id, id)).status),
          );
          return statuses.every((s) => s !== 'active') || undefined;
        },
        { timeoutMs: 90_000, message: () => `jobs still active\n${server.output().slice(-3000)}` },
      );
    } finally {
      stop = true;
      await terminator;
    }
    assert.ok(terminated > 10, `only ${terminated} backends were terminated`);
    assert.equal(server.child.exitCode, null, `the server exited:\n${server.output().slice(-3000)}`);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    for (const id of ids) {
      const job = await t.app.jobs.get(project.id, id);
      assert.equal(job.status, 'completed', `${id}: ${JSON.stringify(job.error)}`);
    }
    assert.doesNotMatch(server.output(), /uncaught exception|unhandled promise rejection|internal-error/);
  });
});
