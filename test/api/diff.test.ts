import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { bearer, createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

describe('GET /v2/agent/{projectId}/job/{id}/diff', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let worker: Worker;
  let repository: string;
  let projectId: string;
  let key: string;

  before(async () => {
    model = await startOpenAIServer();
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
    repository = createGitRepository({ 'index.mdx': '---\ntitle: Home\n---\n\nHello.\n' });
    projectId = (
      await t.app.projects.create({ name: 'Docs', repository, openaiCompatibleBaseUrl: model.url })
    ).id;
    key = (await t.app.keys.create(projectId)).key;
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker.stop(0);
    await t.close();
    await model.close();
    rmSync(repository, { recursive: true, force: true });
  });

  const get = (jobId: string, headers: Record<string, string> = bearer(key)) =>
    t.server.inject({ url: `/v2/agent/${projectId}/job/${jobId}/diff`, headers });
  const ended = (id: string) =>
    waitFor(async () => ((await t.app.jobs.get(projectId, id)).status === 'active' ? undefined : true), {
      timeoutMs: 20_000,
    });

  test('404 problem before the job has a commit; text/x-diff of the branch against its base after', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall(
        'edit_file',
        { path: 'index.mdx', old_string: 'Hello.', new_string: 'Hello, world.' },
        { delayMs: 300 },
      ),
      toolCall('finish', { title: 'Greet the world', summary: 'Greets the world.' }),
    );
    const id = (await t.app.jobs.create(projectId, { prompt: 'Greet the world' })).job.id;
    const before = await get(id);
    assert.equal(before.statusCode, 404);
    assert.match(before.headers['content-type'] as string, /^application\/problem\+json/);
    assert.equal(before.json().code, 'diff-not-found');
    await ended(id);
    const answer = await get(id);
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.headers['content-type'], 'text/x-diff; charset=utf-8');
    assert.equal(answer.headers['x-content-type-options'], 'nosniff', 'never read as HTML');
    assert.match(answer.body, /^diff --git a\/index\.mdx b\/index\.mdx$/m);
    assert.match(answer.body, /^-Hello\.\n\+Hello, world\.$/m);
  });

  test('a job that changed nothing has no diff; the same key rules as every v2 route', async () => {
    model.push(toolCall('finish', { title: 'Nothing', summary: 'Nothing to change.' }));
    const id = (await t.app.jobs.create(projectId, { prompt: 'Check' })).job.id;
    await ended(id);
    assert.equal((await get(id)).statusCode, 404);
    assert.equal((await get(id, {})).statusCode, 401);
    const other = await t.app.projects.create({ name: 'Other', repository });
    const otherKey = (await t.app.keys.create(other.id)).key;
    assert.equal((await get(id, bearer(otherKey))).statusCode, 403);
    assert.equal((await get('job_01jzzzzzzzzzzzzzzzzzzzzzzz')).json().code, 'job-not-found');
  });
});
