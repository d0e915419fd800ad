// docwright maintains its own documentation: a project on this repository (its committed tree,
// docs in docs/) runs a job through the real pipeline (sparse checkout of docs/, the agent's
// tools reading the code outside it, docwright's validator on this site, commit and push), and
// the job's branch changes the one page it was asked to.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { temporaryDirectory } from '../helpers/temp.ts';
import { waitFor } from '../helpers/worker.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  }).trim();

describe('docwright on its own docs', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let worker: Worker;
  let repo: string;

  before(async () => {
    // This repository as committed, in a repository of its own that the job may push to.
    repo = temporaryDirectory('docwright-dogfood-');
    execFileSync('sh', ['-c', `git -C "${ROOT}" archive HEAD | tar -x -C "${repo}"`]);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'docwright');
    model = await startOpenAIServer();
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker?.stop(0);
    await t?.close();
    await model?.close();
  });

  test('a job grounded in the CLI’s code edits docs/cli.mdx; this site passes the validator; only that page changes', async () => {
    const project = await t.app.projects.create({
      name: 'docwright',
      repository: repo,
      docsDir: 'docs',
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    const before = '`docwright project show <id>` shows one project.';
    const after = '`docwright project show <id>` shows one project, with its settings and never its secrets.';
    model.push(
      toolCall('read_file', { path: 'src/cli/project.ts' }),
      toolCall('read_file', { path: 'docs/cli.mdx' }),
      toolCall('edit_file', { path: 'docs/cli.mdx', old_string: before, new_string: after }),
      toolCall('finish', {
        title: 'Say what project show prints',
        summary: 'One sentence in the CLI reference.',
      }),
    );
    const created = await t.app.jobs.create(project.id, {
      prompt: 'Say what docwright project show prints.',
    });
    const id = created.job.id;
    const done = await waitFor(
      async () => {
        const job = await t.app.jobs.get(project.id, id);
        return job.status === 'active' ? undefined : job;
      },
      { timeoutMs: 60_000 },
    );
    const events = await t.app.jobs.events(project.id, id, {});
    assert.equal(done.status, 'completed', JSON.stringify({ error: done.error, events }));
    const results = events
      .filter((e) => e.type === 'agent.tool_result')
      .map((e) => e.data as { tool: string; ok: boolean; output: string });
    // The code outside docs/ is read from git while the checkout holds only the docs.
    assert.match(results[0]!.output, /new Option\('--name <name>', 'project name'\)/);
    assert.ok(
      results.every((r) => r.ok),
      JSON.stringify(results.map((r) => [r.tool, r.ok])),
    );
    const validations = events
      .filter((e) => e.type === 'agent.validation')
      .map((e) => e.data as { ok: boolean; errors: string[] });
    assert.ok(validations.length > 0, 'the validator ran');
    assert.deepEqual(
      validations.filter((v) => !v.ok),
      [],
      'this site passes docwright’s validator',
    );
    // The run verified its change the way docs/verification.mdx says: nothing of its own to fix.
    assert.ok(done.checks.length >= 6, JSON.stringify(done.checks));
    assert.deepEqual(
      done.checks.filter((c) => c.status !== 'passed' && c.status !== 'skipped'),
      [],
    );
    assert.ok(events.some((e) => e.type === 'agent.verification'));
    assert.deepEqual(git(repo, 'diff', '--name-only', `main..${done.branch}`).split('\n'), ['docs/cli.mdx']);
    assert.match(
      git(repo, 'show', `${done.branch}:docs/cli.mdx`),
      new RegExp(after.replace(/[`<>.,]/g, '.')),
    );
  });
});
