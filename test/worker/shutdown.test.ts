import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Runner } from '../../src/pipeline/runner.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import {
  createJob,
  eventTypes,
  exitWithin,
  firstRun,
  jobRow,
  killWorkerProcesses,
  startWorkerProcess,
  type WorkerProcess,
  waitFor,
} from '../helpers/worker.ts';

describe(`worker SIGTERM on ${testDialect} (docs/worker.mdx)`, () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
  });
  afterEach(() => killWorkerProcesses());
  after(() => t.close());

  /** Waits until `worker`'s runner is executing the job's run. */
  async function runningOn(jobId: string, worker: WorkerProcess) {
    let seen: unknown;
    await waitFor(
      async () => {
        const run = await firstRun(t.app, jobId);
        const types = await eventTypes(t.app, jobId);
        seen = { run, types };
        return run.status === 'running' && run.lease_owner === worker.id && types.includes('test.sleeping');
      },
      { message: () => `run never started on ${worker.id}: ${JSON.stringify(seen)}\n${worker.output()}` },
    );
  }

  test('a run that ends within the grace period finishes; nothing new is claimed; exit 0', async () => {
    const worker = await startWorkerProcess({
      ...t.database.env,
      TEST_RUNNER: 'sleep',
      TEST_RUNNER_MS: '1500',
      DOCWRIGHT_SHUTDOWN_GRACE_SECONDS: '10',
      // One slot: the second job waits until the first run ends, which is after SIGTERM.
      DOCWRIGHT_WORKER_CONCURRENCY: '1',
    });
    const jobId = await createJob(t.app, p.projectId);
    await runningOn(jobId, worker);
    const waiting = await createJob(t.app, p.projectId, 'queued behind the first');

    worker.child.kill('SIGTERM');
    const { code, ms } = await exitWithin(worker, 8_000);
    assert.equal(code, 0, worker.output());
    assert.ok(
      ms >= 500 && ms < 8_000,
      `exited once the run ended, not at once nor after the grace (${ms} ms)`,
    );

    const job = await jobRow(t.app, jobId);
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.equal(job.summary, `done by ${worker.pid} for ${jobId}`);
    const run = await firstRun(t.app, jobId);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.attempts, 1);
    assert.deepEqual(await eventTypes(t.app, jobId), [
      'job.created',
      'run.started',
      'test.sleeping',
      'job.completed',
    ]);
    // A stopping worker claims nothing more, although a slot freed up.
    const untouched = await firstRun(t.app, waiting);
    assert.equal(untouched.status, 'queued');
    assert.equal(untouched.attempts, 0);
  });

  test('a run still going when the grace period ends is released, uncounted, for another worker', async () => {
    const worker = await startWorkerProcess({
      ...t.database.env,
      TEST_RUNNER: 'sleep',
      TEST_RUNNER_MS: '60000',
      DOCWRIGHT_SHUTDOWN_GRACE_SECONDS: '0.5',
    });
    const jobId = await createJob(t.app, p.projectId);
    await runningOn(jobId, worker);

    worker.child.kill('SIGTERM');
    const { code, ms } = await exitWithin(worker, 5_000);
    assert.equal(code, 0, worker.output());
    assert.ok(ms >= 400, `waited for the grace period (${ms} ms)`);

    const released = await firstRun(t.app, jobId);
    assert.equal(released.status, 'queued');
    assert.equal(released.lease_owner, null);
    assert.equal(released.lease_expires_at, null);
    assert.equal(released.attempts, 0, 'an interrupted attempt is not counted');
    assert.equal((await jobRow(t.app, jobId)).status, 'active');

    const next = await startWorkerProcess({ ...t.database.env, TEST_RUNNER: 'noop' });
    await waitFor(async () => (await jobRow(t.app, jobId)).status !== 'active', {
      message: () => `job still active:\n${next.output()}`,
    });
    const job = await jobRow(t.app, jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.summary, `done by ${next.pid} for ${jobId}`);
    const run = await firstRun(t.app, jobId);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.attempts, 1);
    assert.deepEqual(await eventTypes(t.app, jobId), [
      'job.created',
      'run.started',
      'test.sleeping',
      'run.started',
      'job.completed',
    ]);
  });

  test('stop() while a claim is in flight: that run is released too, not left running with a lease', async () => {
    const jobId = await createJob(t.app, p.projectId);
    const signals: AbortSignal[] = [];
    const runner: Runner = async (_job, _run, { signal }) => {
      signals.push(signal);
      // Runs until aborted (perhaps before it was called); bounded, should stop() ever miss it.
      await sleep(10_000, undefined, { signal }).catch(() => {});
      return { status: 'completed', prLink: null, branch: null, summary: null };
    };
    const worker = new Worker(t.app, { runner, pollMs: 50 });
    worker.start(); // claims at once: the claim is in flight when stop() begins
    await worker.stop(0);
    assert.equal(worker.running, 0);
    // Long enough for a claim that outlived stop() to land and start its run.
    await sleep(300);
    const run = await firstRun(t.app, jobId);
    assert.equal(run.status, 'queued');
    assert.equal(run.lease_owner, null);
    assert.equal(run.attempts, 0);
    assert.ok(
      signals.every((s) => s.aborted),
      'any run it started was aborted',
    );
  });
});
