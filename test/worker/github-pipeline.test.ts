import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAgentRunner, headBranch } from '../../src/worker/agent-runner.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { type GitHubApi, startGitHubApi } from '../doubles/github-api.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

const TOKEN = 'ghp_pipelineSecretToken0123456789';

/** Every file under `dir` as text, for secret scans. */
function allText(dir: string): string {
  let text = '';
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dir, entry);
    if (statSync(file).isFile()) text += readFileSync(file, 'latin1');
  }
  return text;
}

describe('pipeline on GitHub: POST → agent edits → push over smart HTTP → one pull request', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let gitServer: GitHttpServer;
  let github: GitHubApi;
  let worker: Worker;
  let projectId: string;
  before(async () => {
    model = await startOpenAIServer();
    gitServer = await startGitHttpServer({ tokens: { [TOKEN]: 'write' }, username: 'x-access-token' });
    await gitServer.createRepository('octo/docs', {
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } }, null, 2)}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
    });
    github = await startGitHubApi({ tokens: { [TOKEN]: { push: true } } });
    github.addRepo('octo/docs', { branches: ['main'] });
    t = await startTestApp({
      env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted', DOCWRIGHT_LOG_LEVEL: 'silent' },
    });
    const project = await t.app.projects.create({
      name: 'GitHub docs',
      repository: `${gitServer.baseUrl}/octo/docs`,
      host: 'github',
      apiUrl: github.baseUrl,
      token: TOKEN,
      ref: 'main',
      draft: true,
      labels: ['docs'],
      openaiCompatibleBaseUrl: model.url,
    });
    projectId = project.id;
    worker = new Worker(t.app, { runner: createAgentRunner(t.app), pollMs: 50 });
  });
  after(async () => {
    await worker.stop(0);
    await t.close();
    await Promise.all([model.close(), gitServer.close(), github.close()]);
  });

  const ended = (id: string) =>
    waitFor(
      async () => {
        const j = await t.app.jobs.get(projectId, id);
        return j.status === 'active' ? undefined : j;
      },
      { timeoutMs: 30_000 },
    );

  test('the job ends with the PR link; the branch holds exactly the edit; a follow-up adds a commit to the same PR', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', {
        path: 'index.mdx',
        old_string: 'Welcome.',
        new_string: 'Welcome to the docs.',
      }),
      toolCall('finish', { title: 'Warmer welcome', summary: 'Rewords the welcome line.' }),
    );
    const id = (
      (await t.app.jobs.create(projectId, { prompt: 'Make the welcome warmer' })).body as { id: string }
    ).id;
    const project = await t.app.projects.get(projectId);
    const branch = headBranch(project.settings, id);
    // GitHub learns of branches from pushes; the double is told up front.
    github.repo('octo/docs').branches.add(branch);
    worker.start();

    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const pulls = github.repo('octo/docs').pulls;
    assert.equal(pulls.length, 1);
    assert.match(done.prLink ?? '', new RegExp(`/octo/docs/pull/${pulls[0]!.number}$`));
    assert.equal(done.branch, branch);
    assert.equal(pulls[0]!.title, 'Warmer welcome');
    assert.equal(pulls[0]!.head, branch);
    assert.equal(pulls[0]!.base, 'main');
    assert.equal(pulls[0]!.draft, true);
    assert.deepEqual(pulls[0]!.labels, ['docs']);
    assert.match(pulls[0]!.body ?? '', /Rewords the welcome line\.[\s\S]*Make the welcome warmer[\s\S]*job_/);
    assert.deepEqual(
      gitServer.git('octo/docs', 'diff', '--name-only', `main..${branch}`).trim().split('\n'),
      ['index.mdx'],
    );
    assert.equal(github.violations.length, 0, JSON.stringify(github.violations));

    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', {
        path: 'index.mdx',
        old_string: 'to the docs.',
        new_string: 'to the documentation.',
      }),
      toolCall('finish', { title: 'Spell out documentation', summary: 'No abbreviations.' }),
    );
    await t.app.jobs.message(projectId, id, { prompt: 'Spell it out' });
    const again = await ended(id);
    assert.equal(again.status, 'completed', JSON.stringify(again.error));
    assert.equal(again.prLink, done.prLink, 'the same pull request');
    assert.equal(github.repo('octo/docs').pulls.length, 1, 'no second pull request');
    assert.deepEqual(gitServer.git('octo/docs', 'log', '--format=%s', `main..${branch}`).trim().split('\n'), [
      'Spell out documentation',
      'Warmer welcome',
    ]);

    // The token travelled only in git's Authorization header: nowhere in records, events, model requests or URLs.
    const events = await t.app.jobs.events(projectId, id, { limit: 1000 });
    const records = JSON.stringify({ done, again, events, project: await t.app.projects.get(projectId) });
    const base64 = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    for (const secret of [TOKEN, base64]) {
      assert.ok(!records.includes(secret), 'job records and events');
      assert.ok(!JSON.stringify(model.requests).includes(secret), 'model requests');
      assert.ok(!gitServer.requests.some((r) => r.url.includes(secret)), 'git URLs');
      assert.ok(
        !allText(path.join(gitServer.root, 'octo/docs.git')).includes(secret),
        'the pushed repository',
      );
    }
  });
});
