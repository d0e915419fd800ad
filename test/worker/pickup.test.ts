// docs/worker.mdx: a new job starts within 100 ms when a worker is idle — here across two real
// processes sharing one database: the API (`docwright serve --no-worker`) creates the job, a
// separate `docwright worker` starts it. On SQLite no signal crosses between them but the
// database itself (PRAGMA data_version); on PostgreSQL, LISTEN/NOTIFY. The fallback poll is a
// second, so a missing wake-up shows as pickups of about half a second. In one process the
// wake-up is the process's own signal: tested with a poll too slow to ever start a job.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Runner } from '../../src/pipeline/runner.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { type ServerProcess, startServerProcess, startWorkerCommand } from '../helpers/process.ts';
import { createJob, firstRun, waitFor } from '../helpers/worker.ts';

const JOBS = 9;

describe('pickup across processes: API process + docwright worker', () => {
  let t: TestApp;
  let p: SeededProject;
  let api: ServerProcess;
  let worker: ServerProcess;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app, { rateLimit: 1000 });
    // No model: each run fails at once, after its run.started event, which is all this measures.
    api = await startServerProcess(t.database.env, ['--no-worker']);
    worker = await startWorkerCommand(t.database.env);
  });
  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await t?.close();
  });

  test(`an idle worker in another process starts a new job within 100 ms (median of ${JOBS})`, async () => {
    const pickups: number[] = [];
    for (let i = 0; i < JOBS; i++) {
      const response = await fetch(`${api.url}/v2/agent/${p.projectId}/job`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: `job ${i}` }),
      });
      assert.equal(response.status, 201);
      const job = (await response.json()) as { id: string; createdAt: string };
      // The run's start as the worker records it when it claims the run (job_runs.started_at).
      const started = await waitFor(async () => (await firstRun(t.app, job.id)).started_at, {
        intervalMs: 20,
        message: () => worker.output().slice(-2000),
      });
      pickups.push(Date.parse(started) - Date.parse(job.createdAt));
      // Idle again: the run has ended before the next job is created.
      await waitFor(async () => (await t.app.jobs.get(p.projectId, job.id)).status !== 'active', {
        intervalMs: 20,
      });
    }
    const sorted = [...pickups].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    assert.ok(median <= 100, `create → run start took ${pickups.join(', ')} ms (median ${median})`);
  });
});

describe(`pickup in one process on ${testDialect}: the create wakes the worker`, () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app, { rateLimit: 1000 });
  });
  after(() => t?.close());

  test('with the fallback poll an hour away, only the create’s wake-up can start the job: it starts', async () => {
    const started = new Map<string, () => void>();
    const runner: Runner = (job, _run, { signal }) =>
      new Promise((resolve) => {
        const done = () => resolve({ status: 'completed', prLink: null, branch: null, summary: null });
        started.set(job.id, done);
        signal.addEventListener('abort', done);
      });
    const worker = new Worker(t.app, { runner, pollMs: 3_600_000, concurrency: 2 });
    worker.start();
    try {
      const first = await createJob(t.app, p.projectId, 'first');
      await waitFor(() => started.has(first), { message: 'the first job to start' });
      // The claim pass that started the first job ended before its runner was called (the worker
      // read the job and its project in between):
      // with one slot free and no pass under way, the second job has nothing but its wake-up.
      const second = await createJob(t.app, p.projectId, 'second');
      await waitFor(() => started.has(second), {
        message: 'the second job to start (no wake-up after the create?)',
      });
      for (const done of started.values()) done();
    } finally {
      await worker.stop(0);
    }
  });
});
