// A run's outcome follows what its job did (issue 35): on a project whose repository is on this
// machine, a job that edits a page pushes its branch and opens no pull request, and its
// automation run was recorded `no-changes-needed`. End to end: a real worker, the scripted model,
// real git; both databases.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

const MODEL_KEY = 'sk-local-outcome-test';

describe('an automation run on a local project', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let worker: Worker;

  before(async () => {
    [t, model] = await Promise.all([
      startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } }),
      startOpenAIServer({ apiKey: MODEL_KEY }),
    ]);
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker?.stop(0);
    await Promise.all([t?.close(), model?.close()]);
  });

  const runOnce = async (projectId: string, automationId: string) => {
    const { runId, jobId } = await t.app.automations.trigger(projectId, automationId, {});
    await waitFor(
      async () => {
        const job = await t.app.jobs.get(projectId, jobId!);
        return job.status === 'active' ? undefined : job;
      },
      { timeoutMs: 30_000 },
    );
    const { runs } = await t.app.automations.runs(projectId, automationId);
    return { run: runs.find((r) => r.id === runId)!, job: await t.app.jobs.get(projectId, jobId!) };
  };

  test('a job that pushed a branch with a diff is branch-pushed; one that changed nothing is no-changes-needed', async () => {
    const repository = createGitRepository({ 'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n' });
    const project = await t.app.projects.create({
      name: 'Local docs',
      repository,
      openaiCompatibleBaseUrl: model.url,
      openaiCompatibleApiKey: MODEL_KEY,
    });
    const automation = await t.app.automations.create(project.id, {
      name: 'Greet',
      trigger: { type: 'manual' },
      instruction: 'Greet the readers.',
    });

    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', { path: 'index.mdx', old_string: 'Welcome.', new_string: 'Welcome, readers.' }),
      toolCall('finish', { title: 'Greet readers', summary: 'A warmer welcome.' }),
    );
    const pushed = await runOnce(project.id, automation.id);
    assert.equal(pushed.job.status, 'completed', JSON.stringify(pushed.job.error));
    assert.equal(pushed.job.prLink, null, 'a local repository has no pull requests');
    assert.ok(pushed.job.branch, 'the job pushed a branch');
    const diff = execFileSync('git', ['-C', repository, 'diff', `${project.ref}..${pushed.job.branch}`], {
      encoding: 'utf8',
    });
    assert.match(diff, /^\+Welcome, readers\.$/m, 'with a real diff');
    assert.equal(pushed.run.outcome, 'branch-pushed');
    assert.equal(pushed.run.reason, null);

    model.push(toolCall('finish', { title: 'Nothing to change', summary: 'The greeting is fine.' }));
    const unchanged = await runOnce(project.id, automation.id);
    assert.equal(unchanged.job.status, 'completed', JSON.stringify(unchanged.job.error));
    assert.equal(unchanged.job.branch, null);
    assert.equal(unchanged.run.outcome, 'no-changes-needed');
  });
});
