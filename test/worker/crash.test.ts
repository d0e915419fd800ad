import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import {
  createJob,
  eventTypes,
  firstRun,
  jobRow,
  killWorkerProcesses,
  readRunLog,
  startWorkerProcess,
  type WorkerProcess,
  waitFor,
} from '../helpers/worker.ts';

// A one-second lease keeps the wait for a lost worker's lease to expire short.
const LEASE = { DOCWRIGHT_LEASE_SECONDS: '1' };
const PASSWORD = 'correct horse battery staple';
/** The transcript of a job whose first worker was killed and whose run a second worker finished. */
const RECLAIMED = [
  'job.created',
  'run.started',
  'test.sleeping',
  'run.requeued',
  'run.started',
  'test.sleeping',
  'job.completed',
];

describe(`worker crash on ${testDialect} (docs/worker.mdx)`, () => {
  let t: TestApp;
  let p: SeededProject;
  let logDir: string;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
    logDir = mkdtempSync(path.join(tmpdir(), 'docwright-crash-'));
  });
  afterEach(() => killWorkerProcesses());
  after(async () => {
    await t.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  /** Waits until `worker` holds the job's run and its runner is executing, then SIGKILLs it. */
  async function killWhileRunning(jobId: string, worker: WorkerProcess) {
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
    await worker.stop('SIGKILL');
  }

  test('a killed worker’s run is re-claimed by another worker after its lease expires', async () => {
    const log = path.join(logDir, 'requeue.log');
    const env = { ...t.database.env, ...LEASE, TEST_RUN_LOG: log };
    // An id that names no machine, as a worker on another machine would have: only its lease tells.
    const first = await startWorkerProcess({ ...env, TEST_RUNNER: 'sleep', TEST_WORKER_ID: 'elsewhere-1' });
    const jobId = await createJob(t.app, p.projectId);
    await killWhileRunning(jobId, first);
    const killedAt = new Date().toISOString();

    const second = await startWorkerProcess({ ...env, TEST_RUNNER: 'sleep', TEST_RUNNER_MS: '100' });
    await waitFor(async () => (await jobRow(t.app, jobId)).status !== 'active', {
      timeoutMs: 15_000,
      message: () => `job still active:\n${second.output()}`,
    });

    const job = await jobRow(t.app, jobId);
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.equal(job.summary, `done by ${second.pid} for ${jobId}`, 'the second worker finished it');
    const run = await firstRun(t.app, jobId);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.attempts, 2);
    assert.equal(run.lease_owner, null);

    const events = await t.app.store.db
      .selectFrom('job_events')
      .select(['type', 'data', 'created_at'])
      .where('job_id', '=', jobId)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      events.map((e) => e.type),
      RECLAIMED,
    );
    const requeued = events.find((e) => e.type === 'run.requeued')!;
    assert.deepEqual(JSON.parse(requeued.data), { reason: 'lease-expired', attempts: 1 });
    assert.ok(requeued.created_at >= killedAt, 'requeued only after the worker was gone');
    const started = events.filter((e) => e.type === 'run.started').map((e) => JSON.parse(e.data));
    assert.deepEqual(
      started.map((d) => [d.attempt, d.workerId]),
      [
        [1, first.id],
        [2, second.id],
      ],
    );
    assert.deepEqual(
      readRunLog(log).map((e) => [e.runId, e.attempt, e.pid]),
      [
        [run.id, 1, first.pid],
        [run.id, 2, second.pid],
      ],
    );
  });

  test('after kill -9 and a restart on the same machine, the run is recovered at once, and the job page says so', async () => {
    // A lease of ten minutes: only the restarted worker's knowledge that the process is gone can
    // recover the run within this test.
    const env = { ...t.database.env, DOCWRIGHT_LEASE_SECONDS: '600' };
    const first = await startWorkerProcess({ ...env, TEST_RUNNER: 'sleep' });
    const jobId = await createJob(t.app, p.projectId);
    await killWhileRunning(jobId, first);
    assert.equal((await jobRow(t.app, jobId)).status, 'active');

    const restarted = await startWorkerProcess({ ...env, TEST_RUNNER: 'sleep', TEST_RUNNER_MS: '100' });
    await waitFor(async () => (await jobRow(t.app, jobId)).status !== 'active', {
      timeoutMs: 15_000,
      message: () => `job still active:\n${restarted.output()}`,
    });
    const job = await jobRow(t.app, jobId);
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.equal(job.summary, `done by ${restarted.pid} for ${jobId}`);
    const run = await firstRun(t.app, jobId);
    assert.equal(run.attempts, 2);
    const events = await t.app.jobs.events(p.projectId, jobId, {});
    assert.deepEqual(
      events.map((e) => e.type),
      RECLAIMED,
    );
    assert.deepEqual(events.find((e) => e.type === 'run.requeued')!.data, {
      reason: 'worker-gone',
      attempts: 1,
      workerId: first.id,
      pid: first.pid,
    });

    // The job page's transcript tells what happened.
    const base = await t.listen();
    await t.app.operators.create({ email: 'ops@example.com', password: PASSWORD });
    const login = await fetch(new URL('/login', base), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams({ email: 'ops@example.com', password: PASSWORD }),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(new URL(`/projects/${p.projectId}/jobs/${jobId}`, base), {
      headers: { cookie },
    });
    assert.equal(page.status, 200);
    assert.match(
      await page.text(),
      /Run retried<\/div><div class="small">The process of the worker running it ended \(killed or crashed\): the run was restarted at once\./,
    );
  });

  test('once its attempts are used up, a lost run fails the job with worker-lost', async () => {
    const log = path.join(logDir, 'lost.log');
    const env = { ...t.database.env, ...LEASE, DOCWRIGHT_MAX_ATTEMPTS: '1', TEST_RUN_LOG: log };
    const first = await startWorkerProcess({ ...env, TEST_RUNNER: 'sleep' });
    const jobId = await createJob(t.app, p.projectId);
    await killWhileRunning(jobId, first);

    // Only a surviving worker's sweeper can notice the loss.
    const second = await startWorkerProcess({ ...env, TEST_RUNNER: 'noop' });
    await waitFor(async () => (await jobRow(t.app, jobId)).status !== 'active', {
      timeoutMs: 15_000,
      message: () => `job still active:\n${second.output()}`,
    });

    const job = await jobRow(t.app, jobId);
    assert.equal(job.status, 'failed');
    assert.equal(job.error_code, 'worker-lost');
    const run = await firstRun(t.app, jobId);
    assert.equal(run.status, 'failed');
    assert.equal(run.error_code, 'worker-lost');
    assert.equal(run.attempts, 1);
    assert.equal(run.lease_owner, null);
    const types = await eventTypes(t.app, jobId);
    assert.deepEqual(types, ['job.created', 'run.started', 'test.sleeping', 'job.failed']);
    assert.deepEqual(
      readRunLog(log).map((e) => e.pid),
      [first.pid],
      'the run was not retried',
    );
  });
});
