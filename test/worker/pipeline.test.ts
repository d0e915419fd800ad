import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAgentRunner } from '../../src/worker/agent-runner.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { createGitRepository, type SeededProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

describe('pipeline on a local project: POST → agent edits → commit on a branch in the repository', () => {
  let t: TestApp;
  let server: ScriptedServer;
  let worker: Worker;
  let p: SeededProject;
  let repo: string;
  // Checkouts go to os.tmpdir(); a directory of this test's own shows what a run leaves behind.
  const savedTmpdir = process.env.TMPDIR;
  let runTmp: string;
  const leftovers = () => readdirSync(runTmp).filter((name) => name.startsWith('docwright-run-'));
  before(async () => {
    runTmp = mkdtempSync(path.join(tmpdir(), 'docwright-pipeline-tmp-'));
    process.env.TMPDIR = runTmp;
    server = await startOpenAIServer();
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
    repo = createGitRepository({
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } }, null, 2)}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
      'package.json': '{}\n',
    });
    const project = await t.app.projects.create({
      name: 'Local',
      repository: repo,
      openaiCompatibleBaseUrl: server.url,
      rateLimit: 1000,
    });
    p = { projectId: project.id, key: '', keyId: '', repository: repo };
    worker = new Worker(t.app, { runner: createAgentRunner(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker.stop(0);
    await t.close();
    await server.close();
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    rmSync(runTmp, { recursive: true, force: true });
  });

  const job = (id: string) => t.app.jobs.get(p.projectId, id);
  const ended = (id: string) =>
    waitFor(
      async () => {
        const j = await job(id);
        return j.status === 'active' ? undefined : j;
      },
      { timeoutMs: 20_000 },
    );

  test('a job commits exactly the edit on docwright/<id>; a follow-up adds a second commit to the same branch', async () => {
    server.push(
      toolCall('write_file', {
        path: 'limits.mdx',
        content: '---\ntitle: Limits\n---\n\n100 jobs per hour.\n',
      }),
      toolCall('read_file', { path: 'docs.json' }),
      toolCall('edit_file', { path: 'docs.json', old_string: '"index"', new_string: '"index", "limits"' }),
      toolCall('finish', { title: 'Document the job limits', summary: 'Adds a Limits page to Start.' }),
    );
    const created = await t.app.jobs.create(p.projectId, { prompt: 'Document the limits' });
    const id = (created.body as { id: string }).id;
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const branch = `docwright/${id.slice(-8)}`;
    assert.equal(done.branch, branch);
    assert.equal(done.prLink, null, 'the local host opens no pull request');
    assert.equal(done.summary, 'Adds a Limits page to Start.');
    assert.ok(done.usage && done.usage.inputTokens > 0);

    assert.equal(git(repo, 'log', '--format=%s', `main..${branch}`), 'Document the job limits');
    assert.equal(
      git(repo, 'log', '-1', '--format=%an <%ae>', branch),
      'docwright[bot] <docwright[bot]@users.noreply.github.com>',
    );
    assert.equal(
      git(repo, 'log', '-1', '--format=%B', branch),
      'Document the job limits\n\nAdds a Limits page to Start.\n\nGenerated-By: docwright',
    );
    assert.deepEqual(git(repo, 'diff', '--name-only', `main..${branch}`).split('\n'), [
      'docs.json',
      'limits.mdx',
    ]);
    assert.equal(
      git(repo, 'rev-parse', '--abbrev-ref', 'HEAD'),
      'main',
      "the repository's own checkout is untouched",
    );

    server.push(
      toolCall('read_file', { path: 'limits.mdx' }),
      toolCall('edit_file', {
        path: 'limits.mdx',
        old_string: '100 jobs per hour.',
        new_string: '100 jobs and follow-ups per hour.',
      }),
      toolCall('finish', { title: 'Count follow-ups in the limit', summary: 'Follow-ups count too.' }),
    );
    await t.app.jobs.message(p.projectId, id, { prompt: 'Mention that follow-ups count' });
    const again = await ended(id);
    assert.equal(again.status, 'completed', JSON.stringify(again.error));
    assert.deepEqual(git(repo, 'log', '--format=%s', `main..${branch}`).split('\n'), [
      'Count follow-ups in the limit',
      'Document the job limits',
    ]);
    // The follow-up's first model request carried the earlier instruction.
    const followUp = server.requests.at(-3)!.body;
    assert.match(JSON.stringify(followUp.messages), /Document the limits/);
  });

  test("the project's own model key is used (and never shown)", async () => {
    const keyed = await startOpenAIServer({ apiKey: 'sk-project-only-key' });
    try {
      const project = await t.app.projects.create({
        name: 'Keyed',
        repository: repo,
        openaiCompatibleBaseUrl: keyed.url,
        openaiCompatibleApiKey: 'sk-project-only-key',
      });
      assert.deepEqual(project.credentials.modelKeys, ['openai-compatible']);
      keyed.push(toolCall('finish', { title: 'Nothing', summary: 'Nothing to change.' }));
      const id = ((await t.app.jobs.create(project.id, { prompt: 'Check' })).body as { id: string }).id;
      const done = await waitFor(
        async () => {
          const j = await t.app.jobs.get(project.id, id);
          return j.status === 'active' ? undefined : j;
        },
        { timeoutMs: 20_000 },
      );
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.equal(keyed.requests[0]!.headers.authorization, 'Bearer sk-project-only-key');
      const events = await t.app.jobs.events(project.id, id, {});
      assert.ok(!JSON.stringify({ done, events, project }).includes('sk-project-only-key'));
    } finally {
      await keyed.close();
    }
  });

  test('no changed files: completed, no branch, nothing pushed', async () => {
    const before = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads');
    server.push(toolCall('finish', { title: 'Nothing to do', summary: 'The page is already correct.' }));
    const id = (
      (await t.app.jobs.create(p.projectId, { prompt: 'Check the home page' })).body as { id: string }
    ).id;
    const done = await ended(id);
    assert.equal(done.status, 'completed');
    assert.equal(done.prLink, null);
    assert.equal(done.branch, null);
    assert.equal(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads'), before);
    // Removed once the outcome is recorded (the worker runs the runner's deferred clean-up).
    await waitFor(() => leftovers().length === 0, {
      message: 'a run with nothing to commit removes its checkout',
    });
  });

  test('a validation failure pushes nothing and fails the job with validation-failed', async () => {
    const before = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads');
    const finish = toolCall('finish', { title: 'Orphan page', summary: 'x' });
    server.push(
      toolCall('write_file', { path: 'orphan.mdx', content: '---\ntitle: O\n---\n\nx\n' }),
      finish,
      finish,
      finish,
      finish,
    );
    const id = ((await t.app.jobs.create(p.projectId, { prompt: 'Add an orphan' })).body as { id: string })
      .id;
    const done = await ended(id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'validation-failed');
    assert.equal(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads'), before);
    // Removed once the outcome is recorded (the worker runs the runner's deferred clean-up).
    await waitFor(() => leftovers().length === 0, { message: 'a failed run removes its checkout' });
  });

  test('archiving a job mid-run aborts it, pushes nothing and removes the checkout', async () => {
    const before = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads');
    server.push(
      toolCall('write_file', { path: 'slow.mdx', content: '---\ntitle: Slow\n---\n\nx\n' }),
      // The model is still thinking when the job is archived.
      { ...toolCall('finish', { title: 'Slow', summary: 'x' }), delayMs: 30_000 },
    );
    const id = ((await t.app.jobs.create(p.projectId, { prompt: 'Take your time' })).body as { id: string })
      .id;
    await waitFor(() => server.requests.length >= 2 && leftovers().length === 1, {
      message: () => `the run never reached its second model turn: ${leftovers().join(', ')}`,
    });
    await t.app.jobs.archive(p.projectId, id);
    await waitFor(() => leftovers().length === 0, { message: 'the aborted run left its checkout' });
    assert.equal((await job(id)).status, 'archived');
    assert.equal(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads'), before);
  });
});
