// Questions (docs/questions.mdx), end to end on the configured database: an ask job created over
// HTTP runs in a real agent process on a real checkout with the scripted OpenAI-compatible model,
// is offered only the reading tools and answer, has its citations checked against the files
// (the docs repository and a context repository under _context/<name>/), and completes with its
// answer: no branch, no commit, no pull request.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AgentJob } from '../../src/jobs/agent-job.ts';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { bearer, startTestApp, type TestApp } from '../helpers/app.ts';
import { temporaryDirectory } from '../helpers/temp.ts';
import { waitFor } from '../helpers/worker.ts';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

function repository(files: Record<string, string>): string {
  const dir = temporaryDirectory('docwright-ask-repo-');
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'init');
  return dir;
}

interface Result {
  tool: string;
  ok: boolean;
  output: string;
}

describe('an ask job answers from the docs and the code and changes nothing', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let worker: Worker;
  let url: string;
  let key: string;
  let projectId: string;
  let docs: string;
  let api: string;
  let refs: { docs: string; api: string };
  before(async () => {
    model = await startOpenAIServer();
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
    docs = repository({
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index', 'limits'] }] } })}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
      'limits.mdx': '---\ntitle: Limits\n---\n\nEach project may create 100 jobs per hour.\n',
    });
    api = repository({ 'src/limits.ts': 'export const JOBS_PER_HOUR = 100;\n' });
    const project = await t.app.projects.create({
      name: 'Ask',
      repository: docs,
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    projectId = project.id;
    await t.app.contextRepositories.add(projectId, { name: 'api', repository: api });
    key = (await t.app.keys.create(projectId)).key;
    refs = { docs: git(docs, 'for-each-ref'), api: git(api, 'for-each-ref') };
    url = await t.listen();
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker.stop(0);
    await t.close();
    await model.close();
  });

  const post = async (route: string, body: unknown) => {
    const response = await fetch(`${url}/v2/agent/${projectId}${route}`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as AgentJob };
  };
  const ended = async (id: string) => {
    const done = await waitFor(
      async () => {
        const response = await fetch(`${url}/v2/agent/${projectId}/job/${id}`, { headers: bearer(key) });
        const job = (await response.json()) as AgentJob;
        return job.status === 'active' ? undefined : job;
      },
      { timeoutMs: 30_000 },
    );
    const events = await t.app.jobs.events(projectId, id, {});
    return {
      done,
      events,
      results: events.filter((e) => e.type === 'agent.tool_result').map((e) => e.data as Result),
    };
  };
  const nothingChanged = () => {
    assert.equal(git(docs, 'for-each-ref'), refs.docs, 'no branch was pushed to the docs repository');
    assert.equal(git(docs, 'log', '--format=%s', '--all'), 'init', 'no commit anywhere in it');
    assert.equal(git(docs, 'status', '--porcelain'), '');
    assert.equal(git(api, 'for-each-ref'), refs.api);
  };

  test('POST mode ask: the answer and its citations are stored, prLink and branch stay null, nothing is pushed', async () => {
    const requestsBefore = model.requests.length;
    model.push(
      toolCall('search', { pattern: 'per hour' }),
      toolCall('write_file', { path: 'limits.mdx', content: 'hacked\n' }),
      toolCall('finish', { title: 'x', summary: 'y' }),
      toolCall('answer', {
        text: 'Each project may create **100 jobs per hour**.\n\nThe limit is a constant in the code.',
        citations: [
          { path: './limits.mdx', startLine: 5, endLine: 5 },
          { path: '_context/api/src/limits.ts', startLine: 1, endLine: 1 },
        ],
      }),
    );
    const created = await post('/job', {
      prompt: 'How many jobs may a project create per hour?',
      mode: 'ask',
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.mode, 'ask');
    assert.equal(created.body.answer, null);
    assert.deepEqual(created.body.citations, []);
    const { done, events, results } = await ended(created.body.id);
    assert.equal(done.status, 'completed', JSON.stringify({ error: done.error, results }).slice(0, 3000));
    assert.equal(done.mode, 'ask');
    assert.equal(done.prLink, null);
    assert.equal(done.branch, null);
    assert.equal(
      done.answer,
      'Each project may create **100 jobs per hour**.\n\nThe limit is a constant in the code.',
    );
    assert.equal(
      done.summary,
      'Each project may create **100 jobs per hour**.',
      'the summary is its first line',
    );
    assert.deepEqual(done.citations, [
      { path: 'limits.mdx', startLine: 5, endLine: 5 },
      { path: '_context/api/src/limits.ts', startLine: 1, endLine: 1 },
    ]);
    // The write and finish were refused as tool errors; the file is as it was.
    const [, write, finish] = results;
    assert.equal(write!.ok, false);
    assert.match(
      write!.output,
      /write_file is not available: this run answers a question and changes nothing/,
    );
    assert.equal(finish!.ok, false);
    assert.match(finish!.output, /finish is not available/);
    nothingChanged();
    // Offered only the reading tools and answer; told to answer and cite; nothing verified.
    const first = model.requests[requestsBefore]!.body;
    const offered = (first.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
    assert.deepEqual(offered.sort(), ['answer', 'list_files', 'read_change', 'read_file', 'search']);
    assert.match(JSON.stringify(first.messages[0]), /answers questions about a documentation repository/);
    assert.match(JSON.stringify(first.messages[0]), /_context\/api\//);
    const types = events.map((e) => e.type);
    assert.ok(!types.includes('agent.validation') && !types.includes('agent.verification'), types.join());
    assert.ok(!types.includes('git.pushed'));
    const completed = events.find((e) => e.type === 'job.completed')!.data as { answer: string };
    assert.match(completed.answer, /100 jobs per hour/);
  });

  test('a wrong citation goes back to the model as a tool error naming it; the corrected answer is stored', async () => {
    model.push(
      toolCall('answer', {
        text: 'It is 100.',
        citations: [
          { path: 'quotas.mdx', startLine: 1, endLine: 2 },
          { path: 'limits.mdx', startLine: 5, endLine: 9 },
          { path: 'limits.mdx', startLine: 0, endLine: 1 },
          { path: 'limits.mdx', startLine: 4, endLine: 3 },
          { path: '_context/web/README.md', startLine: 1, endLine: 1 },
        ],
      }),
      toolCall('answer', {
        text: 'It is 100.',
        citations: [{ path: 'limits.mdx', startLine: 1, endLine: 5 }],
      }),
    );
    const created = await post('/job', { prompt: 'What is the hourly limit?', mode: 'ask' });
    const { done, results } = await ended(created.body.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const [refused, accepted] = results;
    assert.equal(refused!.ok, false);
    assert.match(refused!.output, /citations\[0\] \(quotas\.mdx:1-2\): .*not found/i);
    assert.match(
      refused!.output,
      /citations\[1\] \(limits\.mdx:5-9\): the file has 5 lines, so endLine 9 is past its end/,
    );
    assert.match(refused!.output, /citations\[2\] \(limits\.mdx:0-1\): startLine must be at least 1/);
    assert.match(refused!.output, /citations\[3\] \(limits\.mdx:4-3\): endLine 3 is before startLine 4/);
    assert.match(refused!.output, /citations\[4\] .*no context repository named "web"/);
    assert.equal(accepted!.ok, true);
    assert.deepEqual(done.citations, [{ path: 'limits.mdx', startLine: 1, endLine: 5 }]);
    assert.equal(done.answer, 'It is 100.');
    nothingChanged();
  });

  test('a follow-up question stays an ask and is told the earlier answer; a model that never answers fails with no-answer', async () => {
    model.push(toolCall('answer', { text: 'Yes.', citations: [] }));
    const created = await post('/job', { prompt: 'Is there a limit?', mode: 'ask' });
    assert.equal((await ended(created.body.id)).done.answer, 'Yes.');

    const before = model.requests.length;
    model.push(
      toolCall('answer', {
        text: 'Per project.',
        citations: [{ path: 'limits.mdx', startLine: 5, endLine: 5 }],
      }),
    );
    const followUp = await post(`/job/${created.body.id}/message`, { prompt: 'Per key or per project?' });
    assert.equal(followUp.status, 200);
    assert.equal(followUp.body.mode, 'ask');
    const { done } = await ended(created.body.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.answer, 'Per project.');
    assert.equal(done.prLink, null);
    const told = JSON.stringify(model.requests[before]!.body.messages);
    assert.match(told, /Question: Is there a limit\?/);
    assert.match(told, /Answer: Yes\./);
    assert.match(told, /Per key or per project\?/);

    model.push({ text: 'It is 100.' }, { text: 'Really, 100.' }, { text: '100!' });
    const silent = await post('/job', { prompt: 'What is the limit?', mode: 'ask' });
    const failed = (await ended(silent.body.id)).done;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'no-answer');
    assert.match(failed.error!.message, /without calling answer/);
    nothingChanged();
  });
});
