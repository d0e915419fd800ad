import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { createGitRepository, type SeededProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { runCheckouts, waitFor } from '../helpers/worker.ts';

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
  const leftovers = () => runCheckouts(runTmp);
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
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
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
    const id = created.job.id;
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
    const runId = (
      await t.app.store.db
        .selectFrom('job_runs')
        .select('id')
        .where('job_id', '=', id)
        .executeTakeFirstOrThrow()
    ).id;
    assert.equal(
      git(repo, 'log', '-1', '--format=%B', branch),
      `Document the job limits\n\nAdds a Limits page to Start.\n\nGenerated-By: docwright\nDocwright-Run: ${runId}`,
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

  test('a branch someone pushed to during the run: the commit is replayed onto it, and the diff is of what was pushed', async () => {
    server.push(
      toolCall('write_file', { path: 'moving.mdx', content: '---\ntitle: Moving\n---\n\nFirst.\n' }),
      toolCall('read_file', { path: 'docs.json' }),
      toolCall('edit_file', { path: 'docs.json', old_string: '"index"', new_string: '"index", "moving"' }),
      toolCall('finish', { title: 'Add a page', summary: 'Adds it.' }),
    );
    const id = (await t.app.jobs.create(p.projectId, { prompt: 'Add a page' })).job.id;
    const first = await ended(id);
    assert.equal(first.status, 'completed', JSON.stringify(first.error));
    const branch = `docwright/${id.slice(-8)}`;

    // While the follow-up works, a person pushes a commit of their own to the job's branch.
    const theirs = mkdtempSync(path.join(tmpdir(), 'docwright-pipeline-theirs-'));
    try {
      server.push(
        toolCall('read_file', { path: 'moving.mdx' }),
        toolCall('edit_file', { path: 'moving.mdx', old_string: 'First.', new_string: 'Second.' }),
        () => {
          git(theirs, 'clone', '--quiet', '--branch', branch, repo, '.');
          writeFileSync(path.join(theirs, 'theirs.md'), 'Their note.\n');
          git(theirs, 'add', 'theirs.md');
          git(
            theirs,
            '-c',
            'user.name=Person',
            '-c',
            'user.email=p@example.com',
            'commit',
            '-q',
            '-m',
            'Theirs',
          );
          git(theirs, 'push', '--quiet', 'origin', branch);
          return toolCall('finish', { title: 'Say second', summary: 'Second.' });
        },
      );
      await t.app.jobs.message(p.projectId, id, { prompt: 'Say second' });
      const second = await ended(id);
      assert.equal(second.status, 'completed', JSON.stringify(second.error));
    } finally {
      rmSync(theirs, { recursive: true, force: true });
    }
    assert.deepEqual(git(repo, 'log', '--format=%s', `main..${branch}`).split('\n'), [
      'Say second',
      'Theirs',
      'Add a page',
    ]);
    const stored = await t.app.store.db
      .selectFrom('run_diffs')
      .selectAll()
      .where('job_id', '=', id)
      .orderBy('created_at', 'desc')
      .orderBy('run_id', 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(stored.head_commit, git(repo, 'rev-parse', branch), 'the diff leads to the pushed tip');
    assert.equal(stored.base_commit, git(repo, 'rev-parse', 'main'));
    assert.match(stored.diff, /\+Second\./);
    assert.match(stored.diff, /theirs\.md/, 'the branch as pushed holds their commit too');
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
      const id = (await t.app.jobs.create(project.id, { prompt: 'Check' })).job.id;
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
    const id = (await t.app.jobs.create(p.projectId, { prompt: 'Check the home page' })).job.id;
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
    const id = (await t.app.jobs.create(p.projectId, { prompt: 'Add an orphan' })).job.id;
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
    const id = (await t.app.jobs.create(p.projectId, { prompt: 'Take your time' })).job.id;
    await waitFor(() => server.requests.length >= 2 && leftovers().length === 1, {
      message: () => `the run never reached its second model turn: ${leftovers().join(', ')}`,
    });
    await t.app.jobs.archive(p.projectId, id);
    await waitFor(() => leftovers().length === 0, { message: 'the aborted run left its checkout' });
    assert.equal((await job(id)).status, 'archived');
    assert.equal(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads'), before);
  });
  test('a project whose docs live in a subfolder: only that folder (and the site configs) is checked out, the code outside it is read from git, writes there are refused, the commit keeps the whole tree', async () => {
    const mono = mkdtempSync(path.join(tmpdir(), 'docwright-mono-'));
    // A model of its own: what earlier tests left in the shared script cannot reach this run.
    const model = await startOpenAIServer();
    try {
      const files: Record<string, string> = {
        'README.md': '# Monorepo\n',
        'package.json': '{}\n',
        'src/server.ts': '// The rate limit is 100 jobs per hour.\n',
        'src/deep/util.ts': 'export const x = 1;\n',
        'docs/docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
        'docs/index.mdx': '---\ntitle: Home\n---\n\nThe rate limit is 100 jobs per hour.\n',
      };
      for (const [file, content] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(mono, file)), { recursive: true });
        writeFileSync(path.join(mono, file), content);
      }
      git(mono, 'init', '-q', '-b', 'main');
      git(mono, 'add', '-A');
      git(mono, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'init');
      const project = await t.app.projects.create({
        name: 'Monorepo',
        repository: mono,
        docsDir: 'docs',
        openaiCompatibleBaseUrl: model.url,
        rateLimit: 1000,
      });
      model.push(
        toolCall('list_files', { path: '.' }),
        toolCall('search', { pattern: 'rate limit' }),
        toolCall('write_file', { path: 'src/new.ts', content: 'x\n' }),
        toolCall('write_file', { path: 'docs/limits.mdx', content: '---\ntitle: Limits\n---\n\nLimits.\n' }),
        toolCall('read_file', { path: 'docs/docs.json' }),
        toolCall('edit_file', {
          path: 'docs/docs.json',
          old_string: '"index"',
          new_string: '"index","limits"',
        }),
        toolCall('finish', { title: 'Add limits', summary: 'Adds a page.' }),
      );
      const id = (await t.app.jobs.create(project.id, { prompt: 'Document the limits' })).job.id;
      const done = await waitFor(
        async () => {
          const j = await t.app.jobs.get(project.id, id);
          return j.status === 'active' ? undefined : j;
        },
        { timeoutMs: 20_000 },
      );
      const events = await t.app.jobs.events(project.id, id, {});
      assert.equal(done.status, 'completed', JSON.stringify({ error: done.error, events }));
      const results = events
        .filter((e) => e.type === 'agent.tool_result')
        .map((e) => e.data as { tool: string; ok: boolean; output: string });
      const [listed, searched, outside, inside] = results;
      assert.match(listed!.output, /docs\/index\.mdx/);
      assert.match(listed!.output, /README\.md/);
      assert.doesNotMatch(listed!.output, /^\.git$/m, "the worktree's .git file is not listed");
      // Not checked out, but read from the checkout's objects (docs/code-context.mdx).
      assert.match(listed!.output, /^src\/deep\/util\.ts$/m);
      assert.match(searched!.output, /docs\/index\.mdx:5:/);
      assert.match(searched!.output, /^src\/server\.ts:1: \/\/ The rate limit is 100 jobs per hour\.$/m);
      assert.equal(outside!.ok, false);
      assert.match(
        outside!.output,
        /limited to the documentation directory "docs\/"\. The code outside it is read-only\./,
      );
      assert.equal(inside!.ok, true);
      const branch = done.branch!;
      assert.deepEqual(git(mono, 'diff', '--name-only', `main..${branch}`).split('\n'), [
        'docs/docs.json',
        'docs/limits.mdx',
      ]);
      assert.equal(
        git(mono, 'ls-tree', '-r', '--name-only', branch).split('\n').length,
        Object.keys(files).length + 1,
      );
      assert.ok(existsSync(path.join(t.app.config.mirrors.dir)), 'the run used the mirror cache');
    } finally {
      await model.close();
      rmSync(mono, { recursive: true, force: true });
    }
  });
});
