// A change of a context repository on GitLab and on Gitea (docs/code-context.mdx), through the
// real pipeline: the merge/pull request URL in the prompt is resolved through that host's API
// double (backed by real git served over smart HTTP), the model reads a line of its diff and the
// code at its head under `_context/api/`, and the source request gets a note or comment.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { createGitRepository, type GitRepository } from '../doubles/git-repository.ts';
import { type GiteaApi, startGiteaApi } from '../doubles/gitea-api.ts';
import { type GitLabApi, startGitLabApi } from '../doubles/gitlab-api.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { HOST_TOKENS } from '../helpers/hosts.ts';
import { waitFor } from '../helpers/worker.ts';

interface HostSetup {
  apiUrl: string;
  /** The web URL of the change, as a user pastes it. */
  changeUrl: string;
  number: number;
  /** The comments (GitLab: notes) on the source request. */
  comments(): string[];
  close(): Promise<void>;
}

const HOSTS = {
  gitlab: async (git: GitHttpServer, api: GitRepository): Promise<HostSetup> => {
    const gitlab: GitLabApi = await startGitLabApi({ tokens: { [HOST_TOKENS.gitlab]: { accessLevel: 30 } } });
    gitlab.addProject('group/api', { git: api });
    const { iid } = gitlab.openMergeRequest('group/api', {
      sourceBranch: 'feature/format',
      targetBranch: 'main',
      title: 'Export takes a format',
      description: 'md or pdf.',
    });
    return {
      apiUrl: `${gitlab.origin}/api/v4`,
      changeUrl: `${git.baseUrl}/group/api/-/merge_requests/${iid}`,
      number: iid,
      comments: () =>
        gitlab
          .project('group/api')
          .notes.filter((n) => n.iid === iid)
          .map((n) => n.body),
      close: () => gitlab.close(),
    };
  },
  gitea: async (git: GitHttpServer, api: GitRepository): Promise<HostSetup> => {
    const gitea: GiteaApi = await startGiteaApi({ tokens: { [HOST_TOKENS.gitea]: { push: true } } });
    gitea.addRepo('group/api', { git: api });
    const { number } = gitea.openPull('group/api', {
      head: 'feature/format',
      title: 'Export takes a format',
      body: 'md or pdf.',
    });
    return {
      apiUrl: `${gitea.origin}/api/v1`,
      changeUrl: `${git.baseUrl}/group/api/pulls/${number}`,
      number,
      comments: () =>
        gitea
          .repo('group/api')
          .comments.filter((c) => c.issue === number)
          .map((c) => c.body),
      close: () => gitea.close(),
    };
  },
} as const;

for (const kind of ['gitlab', 'gitea'] as const) {
  describe(`a context repository's change on ${kind}, end to end`, () => {
    let t: TestApp;
    let model: ScriptedServer;
    let git: GitHttpServer;
    let api: GitRepository;
    let host: HostSetup;
    let worker: Worker;
    let projectId: string;
    const savedTmpdir = process.env.TMPDIR;
    let runTmp: string;

    before(async () => {
      runTmp = mkdtempSync(path.join(tmpdir(), `docwright-code-changes-${kind}-`));
      process.env.TMPDIR = runTmp;
      const token = HOST_TOKENS[kind];
      [model, git] = await Promise.all([
        startOpenAIServer(),
        startGitHttpServer({ tokens: { [token]: 'read' }, ...(kind === 'gitlab' && { username: 'oauth2' }) }),
      ]);
      api = createGitRepository(
        { 'src/export.ts': 'export function exportDocs() {}\n' },
        { dir: path.join(git.root, 'group/api.git') },
      );
      api.commit(
        'feature/format',
        { 'src/export.ts': 'export function exportDocs(format: "md" | "pdf" = "md") {}\n' },
        { from: 'main', message: 'Export takes a format' },
      );
      host = await HOSTS[kind](git, api);
      t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
      const seeded = await seedProject(t.app, { openaiCompatibleBaseUrl: model.url, commentOnSource: true });
      projectId = seeded.projectId;
      await t.app.contextRepositories.add(projectId, {
        name: 'api',
        repository: `${git.baseUrl}/group/api`,
        host: kind,
        apiUrl: host.apiUrl,
        token,
      });
      worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
      worker.start();
    });
    after(async () => {
      await worker?.stop(0);
      await Promise.all([t?.close(), model?.close(), git?.close(), host?.close()]);
      api?.close();
      if (savedTmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmpdir;
      rmSync(runTmp, { recursive: true, force: true });
    });

    test('resolved with the repository’s token; the model sees its diff and its code at the head; the request gets the reason', async () => {
      model.push(
        toolCall('read_change', { path: 'src/export.ts' }),
        toolCall('read_file', { path: '_context/api/src/export.ts' }),
        toolCall('finish', {
          title: 'Nothing to add',
          summary: 'No documentation change needed: export is internal.',
        }),
      );
      const created = await t.app.jobs.create(projectId, {
        prompt: `Provided code change: ${host.changeUrl}.`,
      });
      const id = created.job.id;
      const done = await waitFor(
        async () => {
          const job = await t.app.jobs.get(projectId, id);
          return job.status === 'active' ? undefined : job;
        },
        { timeoutMs: 30_000 },
      );
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.deepEqual(
        done.changes.map((c) => [c.repository, c.kind, c.number, c.sha, c.title]),
        [['api', 'pull-request', host.number, api.head('feature/format'), 'Export takes a format']],
      );
      const seen = JSON.stringify(model.requests.map((r) => r.body));
      assert.match(seen, /\+export function exportDocs\(format/, 'a line of the diff');
      assert.match(seen, /format: \\"md\\" \| \\"pdf\\" = \\"md\\"/, 'the code at the change head');
      assert.deepEqual(host.comments().length, 1);
      assert.match(host.comments()[0]!, /^No documentation change was needed[\s\S]*export is internal/);
      assert.doesNotMatch(seen, new RegExp(HOST_TOKENS[kind]));
    });
  });
}
