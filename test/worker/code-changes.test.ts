// A job that documents a code change (docs/code-context.mdx), through the real pipeline: the
// DogBench-style prompt names a pull request of the project's own repository on a GitHub API
// double backed by real git (served over smart HTTP); the change is resolved before the model
// starts, the docs pull request follows the repository's template and links the change, and the
// source pull request gets a comment — or the reason when no docs change was needed. A change the
// host does not have ends the job before any model call.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { createGitRepository, type GitRepository } from '../doubles/git-repository.ts';
import { type GitHubApi, startGitHubApi } from '../doubles/github-api.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

const TOKEN = 'ghp_codeChangesToken0123456789abcdef';
/** A token the API double takes and the git server refuses. */
const API_ONLY_TOKEN = 'ghp_codeChangesApiOnly0123456789abcdef';
const TEMPLATE =
  '## Summary\n\n<!-- What changed, and why -->\n\n## Checklist\n\n- [ ] Reviewed the wording\n';

/** An http origin on loopback where nothing listens: connections to it are refused. */
async function closedOrigin(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe('a job that documents a code change, end to end on a GitHub double', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let githttp: GitHttpServer;
  let github: GitHubApi;
  let repo: GitRepository;
  /** The code repository the docs describe, configured as the context repository `api`. */
  let api: GitRepository;
  let apiPull: number;
  let worker: Worker;
  let projectId: string;
  let repository: string;
  let pull: number;
  const savedTmpdir = process.env.TMPDIR;
  let runTmp: string;

  before(async () => {
    runTmp = mkdtempSync(path.join(tmpdir(), 'docwright-code-changes-tmp-'));
    process.env.TMPDIR = runTmp;
    [model, githttp, github] = await Promise.all([
      startOpenAIServer(),
      startGitHttpServer({ tokens: { [TOKEN]: 'write' }, username: 'x-access-token' }),
      startGitHubApi({
        tokens: { [TOKEN]: { login: 'docs-bot', push: true }, [API_ONLY_TOKEN]: { login: 'api-only' } },
      }),
    ]);
    // The repository the git server serves is the one the API double reads its changes from.
    repo = createGitRepository(
      {
        'docs/docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
        'docs/index.mdx': '---\ntitle: Home\n---\n\nRun `api`.\n',
        'src/cli.ts': 'export function run() {\n  return 0;\n}\n',
        '.github/pull_request_template.md': TEMPLATE,
      },
      { dir: path.join(githttp.root, 'octo/docs.git') },
    );
    github.addRepo('octo/docs', { git: repo });
    api = createGitRepository(
      { 'src/export.ts': 'export function exportDocs() {}\n' },
      { dir: path.join(githttp.root, 'octo/api.git') },
    );
    github.addRepo('octo/api', { git: api });
    api.commit(
      'feature/format',
      { 'src/export.ts': 'export function exportDocs(format: "md" | "pdf" = "md") {}\n' },
      { from: 'main', message: 'Export takes a format' },
    );
    apiPull = github.openPull('octo/api', {
      head: 'feature/format',
      title: 'Export takes a format',
      body: 'md or pdf.',
      user: 'octocat',
    }).number;
    repo.commit(
      'feature/verbose',
      { 'src/cli.ts': 'export function run(verbose = false) {\n  return verbose ? 1 : 0;\n}\n' },
      { from: 'main', message: 'Add --verbose' },
    );
    pull = github.openPull('octo/docs', {
      head: 'feature/verbose',
      title: 'Add --verbose to the CLI',
      body: 'Prints each step.',
      user: 'octocat',
    }).number;
    repository = `${githttp.baseUrl}/octo/docs`;
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
    const project = await t.app.projects.create({
      name: 'Docs',
      repository,
      host: 'github',
      apiUrl: github.baseUrl,
      token: TOKEN,
      ref: 'main',
      docsDir: 'docs',
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
      commentOnSource: true,
    });
    projectId = project.id;
    await t.app.contextRepositories.add(projectId, {
      name: 'api',
      repository: `${githttp.baseUrl}/octo/api`,
      host: 'github',
      apiUrl: github.baseUrl,
      token: TOKEN,
    });
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker?.stop(0);
    await Promise.all([t?.close(), model?.close(), githttp?.close(), github?.close()]);
    repo?.close();
    api?.close();
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    rmSync(runTmp, { recursive: true, force: true });
  });

  const ended = (id: string) =>
    waitFor(
      async () => {
        const job = await t.app.jobs.get(projectId, id);
        return job.status === 'active' ? undefined : job;
      },
      { timeoutMs: 30_000 },
    );
  const create = async (body: Record<string, unknown>) => (await t.app.jobs.create(projectId, body)).job.id;

  test('the DogBench-style prompt: the change is resolved, the PR follows the template and links it, the source PR gets the link', async () => {
    const requestsBefore = model.requests.length;
    model.push(
      toolCall('read_change', { path: 'src/cli.ts' }),
      toolCall('read_file', { path: 'src/cli.ts' }),
      toolCall('read_file', { path: 'docs/index.mdx' }),
      toolCall('edit_file', {
        path: 'docs/index.mdx',
        old_string: 'Run `api`.',
        new_string: 'Run `api`, or `api --verbose` to print each step.',
      }),
      toolCall('finish', { title: 'Document --verbose', summary: 'Documents the new --verbose flag.' }),
    );
    const url = `${repository}/pull/${pull}`;
    const id = await create({ prompt: `Provided code change: ${url}.` });
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const head = repo.head('feature/verbose');
    assert.deepEqual(done.changes, [
      {
        repository: 'docs',
        kind: 'pull-request',
        number: pull,
        sha: head,
        url: `${github.origin}/octo/docs/pull/${pull}`,
        title: 'Add --verbose to the CLI',
      },
    ]);
    // What the model was given: the change's brief, a line of its diff, and the code at its head.
    const seen = JSON.stringify(model.requests.slice(requestsBefore).map((r) => r.body));
    assert.match(seen, /Add --verbose to the CLI/);
    assert.match(seen, /\+ {2}return verbose \? 1 : 0;/, 'a line of the diff');
    assert.match(seen, /export function run\(verbose = false\)/, 'src/cli.ts at the change head');

    const docsPull = github.repo('octo/docs').pulls.find((p) => p.head === done.branch);
    assert.ok(docsPull, 'the docs pull request was opened');
    const body = docsPull.body ?? '';
    // The template's sections stay; the description goes under its Summary heading.
    assert.match(
      body,
      /^## Summary\n\nDocuments the new --verbose flag\.\n\n\*\*Code changes\*\*\n\n- \[docs#\d+: Add --verbose to the CLI\]\(http:\/\/[^)]+\/octo\/docs\/pull\/\d+\)\n\n<!-- What changed, and why -->\n\n## Checklist\n\n- \[ \] Reviewed the wording\n\n---\n\n\*\*Instruction\*\*/,
    );
    assert.match(body, new RegExp(`Job: \`${id}\``));

    const comments = github.repo('octo/docs').comments.filter((c) => c.issue === pull);
    assert.equal(comments.length, 1);
    assert.match(
      comments[0]!.body,
      new RegExp(`proposed in ${done.prLink!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    const events = { events: await t.app.jobs.events(projectId, id, {}) };
    assert.ok(events.events.some((e) => e.type === 'changes.resolved'));
    assert.ok(events.events.some((e) => e.type === 'change.commented'));
  });

  test('nothing to document: completed without a pull request, and the source PR is told why', async () => {
    model.push(
      toolCall('finish', {
        title: 'No docs change',
        summary: 'No documentation change needed: the pull request only renames a private helper.',
      }),
    );
    const id = await create({
      prompt: 'Document this if users need it.',
      changes: [{ repository: 'docs', pullRequest: pull }],
    });
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.prLink, null);
    assert.equal(done.changes.length, 1);
    const last = github
      .repo('octo/docs')
      .comments.filter((c) => c.issue === pull)
      .at(-1);
    assert.match(last?.body ?? '', /^No documentation change was needed[\s\S]*renames a private helper/);
  });

  test('a change of a context repository is resolved with its credentials; a URL of any other repository is never fetched', async () => {
    const before = github.requests.length;
    model.push(
      toolCall('read_file', { path: '_context/api/src/export.ts' }),
      toolCall('write_file', { path: '_context/api/src/export.ts', content: 'hacked' }),
      toolCall('finish', { title: 'Nothing yet', summary: 'No documentation change needed for this test.' }),
    );
    const requestsBefore = model.requests.length;
    const other = `${githttp.baseUrl}/octo/elsewhere/pull/1`;
    const id = await create({
      prompt: `Provided code change: ${githttp.baseUrl}/octo/api/pull/${apiPull}. Unrelated: ${other}`,
    });
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(
      done.changes.map((c) => [c.repository, c.number, c.sha, c.title]),
      [['api', apiPull, api.head('feature/format'), 'Export takes a format']],
    );
    const asked = github.requests.slice(before).map((r) => r.path);
    assert.ok(
      asked.some((p) => p.includes('/repos/octo/api/pulls/')),
      asked.join('\n'),
    );
    assert.deepEqual(
      asked.filter((p) => p.includes('elsewhere')),
      [],
      'the unconfigured repository was never contacted',
    );
    assert.ok(github.repo('octo/api').comments.some((c) => c.issue === apiPull));
    const seen = JSON.stringify(model.requests.slice(requestsBefore).map((r) => r.body));
    assert.match(seen, /format: \\"md\\" \| \\"pdf\\"/, 'the context repository at the change head');
    assert.match(seen, /read-only/, 'the write was refused');
    assert.equal(api.git(['show', 'feature/format:src/export.ts']).includes('hacked'), false);
  });

  test('a change the host does not have ends the job change-unavailable before any model call', async () => {
    const requestsBefore = model.requests.length;
    const id = await create({ prompt: `Provided code change: ${repository}/pull/9999.` });
    const done = await ended(id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'change-unavailable');
    assert.match(done.error?.message ?? '', /docs#9999/);
    assert.doesNotMatch(done.error?.message ?? '', new RegExp(TOKEN));
    assert.equal(model.requests.length, requestsBefore, 'the model was never called');
  });

  test("a context repository git cannot fetch ends the job context-unavailable with git's answer, before any model call", async () => {
    // The host's API knows each repository (their changes resolve); git cannot fetch them: one is
    // missing from the git server, one's token is refused there, one's server refuses connections.
    const missing = createGitRepository({ 'src/a.ts': 'export const a = 1;\n' });
    try {
      github.addRepo('octo/missing', { git: missing });
      missing.commit('feature/x', { 'src/a.ts': 'export const a = 2;\n' }, { from: 'main', message: 'x' });
      const missingPull = github.openPull('octo/missing', {
        head: 'feature/x',
        title: 'X',
        user: 'octocat',
      }).number;
      github.addRepo('octo/refusing', { git: api });
      const refusingPull = github.openPull('octo/refusing', {
        head: 'feature/format',
        title: 'Format',
        user: 'octocat',
      }).number;
      const closed = await closedOrigin();
      const cases = [
        { name: 'missing', origin: githttp.baseUrl, token: TOKEN, pull: missingPull, answer: /not found/ },
        {
          name: 'refusing',
          origin: githttp.baseUrl,
          token: API_ONLY_TOKEN,
          pull: refusingPull,
          answer: /rejected the credentials/,
        },
        {
          name: 'refusing',
          origin: closed,
          token: TOKEN,
          pull: refusingPull,
          answer: /Failed to connect|refused/i,
        },
      ];
      for (const { name, origin, token, pull: number, answer } of cases) {
        await t.app.contextRepositories.add(projectId, {
          name,
          repository: `${origin}/octo/${name}`,
          host: 'github',
          apiUrl: github.baseUrl,
          token,
        });
        try {
          const requestsBefore = model.requests.length;
          const id = await create({
            prompt: 'Document it.',
            changes: [{ repository: name, pullRequest: number }],
          });
          const done = await ended(id);
          assert.equal(done.status, 'failed');
          assert.equal(done.error?.code, 'context-unavailable', done.error?.message);
          assert.match(done.error?.message ?? '', new RegExp(`context repository "${name}"`));
          assert.match(done.error?.message ?? '', answer);
          assert.ok(!done.error?.message.includes(token), 'the token is not in the message');
          assert.equal(model.requests.length, requestsBefore, 'the model was never called');
        } finally {
          await t.app.contextRepositories.remove(projectId, name);
        }
      }
    } finally {
      missing.close();
    }
  });

  test('commentOnSource off: the source pull request gets no comment and the job no change.commented event', async () => {
    await t.app.projects.update(projectId, { commentOnSource: false });
    try {
      const commentsBefore = github.repo('octo/docs').comments.length;
      model.push(
        toolCall('read_file', { path: 'docs/index.mdx' }),
        toolCall('edit_file', {
          path: 'docs/index.mdx',
          old_string: 'Run `api`.',
          new_string: 'Run `api`; `api --verbose` prints each step.',
        }),
        toolCall('finish', { title: 'Document --verbose', summary: 'Documents the new --verbose flag.' }),
      );
      const id = await create({
        prompt: 'Document this change.',
        changes: [{ repository: 'docs', pullRequest: pull }],
      });
      const done = await ended(id);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.ok(done.prLink, 'a docs pull request was opened, which a comment would have linked');
      assert.equal(done.changes.length, 1);
      assert.equal(github.repo('octo/docs').comments.length, commentsBefore, 'no comment');
      const events = await t.app.jobs.events(projectId, id, {});
      assert.ok(events.some((e) => e.type === 'changes.resolved'));
      assert.deepEqual(
        events.filter((e) => e.type === 'change.commented'),
        [],
      );
    } finally {
      await t.app.projects.update(projectId, { commentOnSource: true });
    }
  });

  test('a change URL whose path names a configured repository on another host is never fetched, and the job has no changes', async () => {
    const before = github.requests.length;
    model.push(toolCall('finish', { title: 'Nothing', summary: 'No documentation change needed here.' }));
    // `octo/api` is the context repository `api` at githttp's host; these name it at other hosts.
    const elsewhere = [
      `http://code.example.net/octo/api/pull/${apiPull}`,
      `${githttp.baseUrl.replace('127.0.0.1', 'localhost')}/octo/docs/pull/${pull}`,
    ];
    const id = await create({ prompt: `Provided code changes: ${elsewhere.join(' and ')}.` });
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.changes, []);
    const asked = github.requests.slice(before).map((r) => r.path);
    assert.deepEqual(
      asked.filter((p) => /\/pulls\/|\/commits\//.test(p)),
      [],
      `no change was fetched: ${asked.join(', ')}`,
    );
  });
});
