// docs/api/mintlify-v1.mdx's head-branch rule holds in the run itself, for a job made without the API's check
// (an older client, a bug, a direct call): a job whose head branch is the base branch, the
// repository's default branch or a branch docwright did not create fails before the agent
// starts, and nothing is pushed. Real git over smart HTTP and the GitHub API double.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { waitFor } from '../helpers/worker.ts';

const MODEL_KEY = 'sk-headBranchModelKey0123456789ab';

describe(`a run never pushes to a branch it may not (${testDialect})`, () => {
  let t: TestApp;
  let hosted: HostedRepository;
  let model: ScriptedServer;
  let worker: Worker;

  before(async () => {
    [t, hosted, model] = await Promise.all([
      startTestApp(),
      startHostedRepository('github', {
        'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
        'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
      }),
      startOpenAIServer({ apiKey: MODEL_KEY }),
    ]);
    hosted.git.git(hosted.name, 'branch', 'develop', 'main');
    hosted.git.git(hosted.name, 'branch', 'feature/theirs', 'main');
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker?.stop(0);
    await Promise.all([t?.close(), hosted?.close(), model?.close()]);
  });

  const project = (ref: string) =>
    t.app.projects.create({
      name: `Docs on ${ref}`,
      repository: hosted.repository,
      host: 'github',
      apiUrl: hosted.apiUrl,
      token: hosted.token,
      ref,
      model: 'openai-compatible/scripted',
      openaiCompatibleBaseUrl: model.url,
      openaiCompatibleApiKey: MODEL_KEY,
    });

  for (const [what, ref, branch, code, message] of [
    [
      'the base branch',
      'main',
      'main',
      'branch-not-allowed',
      /never pushes to main: it is the job's base branch/,
    ],
    [
      'the default branch',
      'develop',
      'main',
      'branch-not-allowed',
      /never pushes to main: it is the repository's default branch/,
    ],
    [
      'a branch docwright did not create',
      'main',
      'feature/theirs',
      'branch-exists',
      /feature\/theirs already exists and docwright did not create it/,
    ],
  ] as const) {
    test(`a job made with ${what} as its head branch fails with ${code}; nothing is pushed`, async () => {
      const refs = () => hosted.git.git(hosted.name, 'for-each-ref', '--format=%(refname) %(objectname)');
      const before = refs();
      const asked = model.requests.length;
      const { id: projectId } = await project(ref);
      const created = await t.app.jobs.create(projectId, { prompt: 'Update the docs' }, undefined, {
        headBranch: branch,
      });
      const jobId = created.job.id;
      const job = await waitFor(async () => {
        const j = await t.app.jobs.get(projectId, jobId);
        return j.status === 'active' ? undefined : j;
      });
      assert.equal(job.status, 'failed');
      assert.equal(job.error?.code, code);
      assert.match(job.error?.message ?? '', message);
      assert.equal(refs(), before, 'nothing was pushed');
      assert.deepEqual(hosted.pulls(), []);
      assert.equal(model.requests.length, asked, 'refused before the model was asked');
    });
  }
});
