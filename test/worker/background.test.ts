// The background loops of a process (src/worker/background.ts), composed once for `docwright
// serve`, `serve --no-worker` and `docwright worker`: which loops each runs, and that they start
// and stop together.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Runner } from '../../src/pipeline/runner.ts';
import { backgroundLoops } from '../../src/worker/background.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createJob, firstRun, waitFor } from '../helpers/worker.ts';

const runner: Runner = async (_job, run) => ({
  status: 'completed',
  prLink: null,
  branch: null,
  summary: `did ${run.prompt}`,
});

describe('background loops', () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
  });
  after(() => t.close());

  test('serve runs the worker, the webhook sender, the automations and the comment loop; a queued run is done; stop ends them', async () => {
    const background = backgroundLoops(t.app, { runsJobs: true, servesApi: true, runner });
    assert.deepEqual(background.names, ['worker', 'webhooks', 'automations', 'comments']);
    const jobId = await createJob(t.app, p.projectId);
    background.start();
    try {
      await waitFor(async () => (await firstRun(t.app, jobId)).status === 'succeeded', {
        message: 'the run was done',
      });
    } finally {
      await background.stop();
    }
    assert.equal(background.worker.running, 0);
  });

  test('serve --no-worker only sweeps and processes automations and comments: a queued run stays queued', async () => {
    const background = backgroundLoops(t.app, { runsJobs: false, servesApi: true, runner });
    assert.deepEqual(background.names, ['worker', 'automations', 'comments']);
    const jobId = await createJob(t.app, p.projectId);
    background.start();
    await sleep(300);
    await background.stop();
    assert.equal((await firstRun(t.app, jobId)).status, 'queued');
  });

  test('a deployment with a Slack app processes Slack events in its API processes', async () => {
    const slack = await startTestApp({
      env: { DOCWRIGHT_SLACK_SIGNING_SECRET: 'slack-signing-secret-background-01' },
    });
    try {
      const api = backgroundLoops(slack.app, { runsJobs: true, servesApi: true, runner });
      assert.deepEqual(api.names, ['worker', 'webhooks', 'automations', 'comments', 'slack']);
      const worker = backgroundLoops(slack.app, { runsJobs: true, servesApi: false, runner });
      assert.deepEqual(worker.names, ['worker', 'webhooks']);
    } finally {
      await slack.close();
    }
  });

  test('docwright worker runs jobs and sends webhooks, without the automations', async () => {
    const background = backgroundLoops(t.app, { runsJobs: true, servesApi: false, concurrency: 3, runner });
    assert.deepEqual(background.names, ['worker', 'webhooks']);
    const jobId = await createJob(t.app, p.projectId);
    background.start();
    try {
      await waitFor(async () => (await firstRun(t.app, jobId)).status === 'succeeded', {
        message: 'the run was done',
      });
    } finally {
      await background.stop();
    }
  });
});
