import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sweepRuns } from '../../src/jobs/queue/sweep.ts';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import type { EmitStep, RunnableJob, RunnableRun, Runner } from '../../src/pipeline/runner.ts';
import { Worker } from '../../src/worker/worker.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

/** Polls `check` until it returns a value other than undefined/false, or fails after `ms`. */
async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  ms = 5_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A runner the test steers: each call waits until the test releases it or the signal aborts. */
function controllableRunner() {
  const calls: {
    job: RunnableJob;
    run: RunnableRun;
    signal: AbortSignal;
    emit: EmitStep;
    release: (o?: object) => void;
  }[] = [];
  const runner: Runner = (job, run, { signal, emit }) =>
    new Promise((resolve) => {
      const release = (outcome: object = {}) =>
        resolve({
          status: 'completed',
          prLink: null,
          branch: null,
          summary: `did ${run.prompt}`,
          ...outcome,
        } as never);
      calls.push({ job, run, signal, emit, release });
      signal.addEventListener('abort', () => release());
    });
  return { runner, calls };
}

describe('worker (in process)', () => {
  let t: TestApp;
  let p: SeededProject;
  const workers: Worker[] = [];
  const start = (runner: Runner, options: Partial<ConstructorParameters<typeof Worker>[1]> = {}) => {
    const worker = new Worker(t.app, { runner, pollMs: 50, cancelCheckMs: 50, ...options });
    worker.start();
    workers.push(worker);
    return worker;
  };
  const job = (id: string) => t.app.jobs.get(p.projectId, id);
  const create = async (prompt = 'Document it', projectId = p.projectId) =>
    (await t.app.jobs.create(projectId, { prompt })).job.id;
  const run = (jobId: string, seq = 1) =>
    t.app.store.db
      .selectFrom('job_runs')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('seq', '=', seq)
      .executeTakeFirstOrThrow();
  /** Another worker takes the job's run over, as the sweeper and a rival claim would. */
  const stealLease = (jobId: string) =>
    t.app.store.db
      .updateTable('job_runs')
      .set({ lease_owner: 'thief' })
      .where('job_id', '=', jobId)
      .execute();
  const eventTypes = async (jobId: string) =>
    (await t.app.jobs.events(p.projectId, jobId, {})).map((e) => e.type);

  before(async () => {
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai/gpt-test' } });
    p = await seedProject(t.app, { rateLimit: 10_000 });
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  });
  after(() => t.close());

  test('a run completes: outcome, usage, transcript; prLink appears when the job ends', async () => {
    start(async (_job, _run, { emit, recordUsage }) => {
      await emit('agent.step', { n: 1 });
      await recordUsage({ inputTokens: 100, outputTokens: 20 });
      await recordUsage({ inputTokens: 20, outputTokens: 10 });
      return {
        status: 'completed',
        prLink: 'https://example.test/pr/7',
        branch: 'docwright/abc',
        summary: 'Added a page',
      };
    });
    const id = await create();
    const done = await waitFor(async () => ((await job(id)).status === 'completed' ? job(id) : undefined));
    assert.equal(done.prLink, 'https://example.test/pr/7');
    assert.equal(done.branch, 'docwright/abc');
    assert.equal(done.summary, 'Added a page');
    assert.deepEqual(done.usage, { inputTokens: 120, outputTokens: 30 });
    assert.deepEqual(await eventTypes(id), ['job.created', 'run.started', 'agent.step', 'job.completed']);
    const r = await run(id);
    assert.equal(r.status, 'succeeded');
    assert.equal(r.attempts, 1);
    assert.equal(r.lease_owner, null);
    const metrics = await t.app.metrics.registry.metrics();
    assert.match(metrics, /docwright_pickup_latency_seconds_count [1-9]/);
  });

  test('deferred clean-up runs after the outcome is recorded, and stop() waits for it', async () => {
    let finishCleanup!: () => void;
    const cleanupDone = new Promise<void>((resolve) => {
      finishCleanup = resolve;
    });
    let cleanupStarted = false;
    const worker = start(async (_job, run, { defer }) => {
      defer(async () => {
        cleanupStarted = true;
        await cleanupDone;
      });
      return { status: 'completed', prLink: null, branch: null, summary: `did ${run.prompt}` };
    });
    // Whatever fails below, the clean-up ends: a worker left waiting on it would never stop.
    try {
      const id = await create('Clean up later');
      await waitFor(async () => ((await job(id)).status === 'completed' ? true : undefined));
      // The outcome is visible before the run's remaining bookkeeping (and so its clean-up) is done.
      await waitFor(async () => cleanupStarted, 5_000, 'the clean-up to start');
      let stopped = false;
      const stopping = worker.stop(0).then(() => {
        stopped = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(stopped, false, 'stop() waits for the clean-up');
      finishCleanup();
      await stopping;
      assert.equal(stopped, true);
    } finally {
      finishCleanup();
    }
  });

  test('the run pipeline fails at once with model-not-configured when no model is set', async () => {
    const bare = await startTestApp();
    try {
      const q = await seedProject(bare.app);
      const worker = new Worker(bare.app, { runner: createPipeline(bare.app), pollMs: 50 });
      worker.start();
      const id = (await bare.app.jobs.create(q.projectId, { prompt: 'x' })).job.id;
      const failed = await waitFor(async () => {
        const j = await bare.app.jobs.get(q.projectId, id);
        return j.status === 'failed' ? j : undefined;
      });
      await worker.stop(0);
      assert.equal(failed.model, '');
      assert.equal(failed.error?.code, 'model-not-configured');
    } finally {
      await bare.close();
    }
  });

  test('archiving an active job aborts its run within 5 s and writes nothing after', async () => {
    const { runner, calls } = controllableRunner();
    start(runner);
    const id = await create();
    const call = await waitFor(async () => calls.find((c) => c.job.id === id));
    await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${p.projectId}/job/${id}/archive`,
      headers: bearer(p.key),
    });
    await waitFor(async () => call.signal.aborted, 5_000, 'the run to be aborted');
    assert.equal(call.signal.reason.reason, 'cancelled');
    await call.emit('agent.late', {});
    const archived = await job(id);
    assert.equal(archived.status, 'archived');
    assert.ok(!(await eventTypes(id)).includes('agent.late'));
    assert.equal((await run(id)).status, 'cancelled');
  });

  test('follow-ups: prLink is null while active, the new run gets the history, the link comes back', async () => {
    const { runner, calls } = controllableRunner();
    start(runner);
    const id = await create('first instruction');
    (await waitFor(async () => calls.find((c) => c.job.id === id))).release({
      prLink: 'https://example.test/pr/1',
      branch: 'b1',
      summary: 'first done',
    });
    await waitFor(async () => (await job(id)).status === 'completed');
    assert.equal((await job(id)).prLink, 'https://example.test/pr/1');

    const res = await t.app.jobs.message(p.projectId, id, { prompt: 'second instruction' });
    assert.equal(res.job.prLink, null);
    const second = await waitFor(async () => calls.find((c) => c.job.id === id && c.run.seq === 2));
    assert.equal((await job(id)).prLink, null, 'null during the follow-up run');
    assert.equal(second.run.prompt, 'second instruction');
    assert.deepEqual(second.run.history, [
      {
        seq: 1,
        prompt: 'first instruction',
        status: 'succeeded',
        summary: 'first done',
        error: null,
        baseCommit: null,
      },
    ]);
    second.release({ prLink: null, summary: 'nothing to change' });
    const done = await waitFor(async () => ((await job(id)).status === 'completed' ? job(id) : undefined));
    assert.equal(done.prLink, 'https://example.test/pr/1', 'the open pull request is still the job’s');
    assert.equal(done.summary, 'nothing to change');
  });

  test('a stolen lease aborts the run, and nothing the run does afterwards is written', async () => {
    const { runner, calls } = controllableRunner();
    start(runner);
    const id = await create();
    const call = await waitFor(async () => calls.find((c) => c.job.id === id));
    await stealLease(id);
    await waitFor(async () => call.signal.aborted, 5_000, 'the run to notice');
    assert.equal(call.signal.reason.reason, 'lease-lost');
    await call.emit('agent.after-loss', {});
    await sleep(100);
    assert.equal((await job(id)).status, 'active', 'the job belongs to the thief now');
    assert.ok(!(await eventTypes(id)).includes('agent.after-loss'));
    assert.equal((await run(id)).lease_owner, 'thief');
    await t.app.jobs.archive(p.projectId, id);
  });

  test('the heartbeat alone aborts a run whose lease was taken (no cancellation check, no event written)', async () => {
    const { runner, calls } = controllableRunner();
    // The lease check that runs with the heartbeat (every 100 ms here) is the only one left:
    // the cancellation check is an hour away and the runner writes no event.
    start(runner, { leaseMs: 300, cancelCheckMs: 3_600_000 });
    const id = await create('a run whose lease is taken');
    const call = await waitFor(async () => calls.find((c) => c.job.id === id));
    await stealLease(id);
    try {
      await waitFor(async () => call.signal.aborted, 2_000, 'the heartbeat to notice the lost lease');
      assert.equal(call.signal.reason.reason, 'lease-lost');
      assert.equal((await job(id)).status, 'active', 'the job belongs to the thief now');
    } finally {
      await t.app.jobs.archive(p.projectId, id);
    }
  });

  test('an outcome reached after the lease was lost is discarded: the job stays with the new holder', async () => {
    // The lease goes in the moment between the runner's answer and finishRun: no check runs in
    // between, so only finishRun's own guard stands between the outcome and the job.
    start(
      async (job, run) => {
        await t.app.store.db
          .updateTable('job_runs')
          .set({ lease_owner: 'thief' })
          .where('id', '=', run.id)
          .execute();
        return {
          status: 'completed',
          prLink: 'https://example.test/pr/late',
          branch: 'late',
          summary: `late ${job.id}`,
        };
      },
      { cancelCheckMs: 3_600_000, leaseMs: 3_600_000 },
    );
    const id = await create('an outcome that comes too late');
    await waitFor(async () => (await run(id)).lease_owner === 'thief');
    await sleep(200);
    const after = await job(id);
    assert.equal(after.status, 'active');
    assert.equal(after.prLink, null);
    assert.equal(after.summary, null);
    assert.ok(!(await eventTypes(id)).includes('job.completed'));
    assert.equal((await run(id)).status, 'running');
    await t.app.jobs.archive(p.projectId, id);
  });

  test('concurrency: per worker and per project', async () => {
    const { runner, calls } = controllableRunner();
    const other = await seedProject(t.app, { rateLimit: 100 });
    start(runner, { concurrency: 2, projectConcurrency: 1 });
    const ids = [
      await create('a'),
      await create('b'),
      await create('c', other.projectId),
      await create('d', other.projectId),
    ];
    await waitFor(async () => calls.length === 2);
    await sleep(200);
    assert.deepEqual(
      calls.map((c) => c.job.projectId).sort(),
      [p.projectId, other.projectId].sort(),
      'one run per project, two in the worker',
    );
    for (const c of [...calls]) c.release();
    await waitFor(async () => calls.length === 4);
    for (const c of calls) c.release();
    await waitFor(async () => {
      for (const id of ids.slice(0, 2)) if ((await job(id)).status !== 'completed') return false;
      return true;
    });
  });

  test('sweeper: an expired lease is requeued, then fails with worker-lost; overdue jobs fail with time-limit-exceeded', async () => {
    const id = await create();
    const expireLease = (attempts: number) =>
      t.app.store.db
        .updateTable('job_runs')
        .set({
          status: 'running',
          attempts,
          lease_owner: 'dead-worker',
          lease_expires_at: new Date(Date.now() - 1).toISOString(),
        })
        .where('job_id', '=', id)
        .execute();
    const options = () => ({
      now: new Date(),
      maxAttempts: 2,
      jobTimeLimitMs: 3_600_000,
      queueTimeLimitMs: 3_600_000,
    });
    await expireLease(1);
    assert.deepEqual((await sweepRuns(t.app.store.db, options())).requeued.length, 1);
    assert.equal((await run(id)).status, 'queued');
    assert.ok((await eventTypes(id)).includes('run.requeued'));
    await expireLease(2);
    assert.equal((await sweepRuns(t.app.store.db, options())).lost.length, 1);
    const lost = await job(id);
    assert.equal(lost.status, 'failed');
    assert.equal(lost.error?.code, 'worker-lost');

    // The time limit counts from when a run started; a wait in the queue has its own bound.
    const minutes = (n: number) => new Date(Date.now() + n * 60_000);
    const limits = { maxAttempts: 3, jobTimeLimitMs: 20 * 60_000, queueTimeLimitMs: 60 * 60_000 };
    const waiting = await create('waits in the queue');
    const late = await create('starts after a long wait');
    await t.app.store.db
      .updateTable('job_runs')
      .set({
        status: 'running',
        attempts: 1,
        lease_owner: 'slow-worker',
        lease_expires_at: minutes(600).toISOString(),
        started_at: minutes(50).toISOString(),
      })
      .where('job_id', '=', late)
      .execute();
    const atSixtyFive = await sweepRuns(t.app.store.db, { now: minutes(65), ...limits });
    assert.deepEqual(atSixtyFive.timedOut, [], 'started 15 min ago: within the limit, whatever its wait');
    assert.equal((await job(late)).status, 'active');
    assert.equal((await job(waiting)).status, 'failed', 'never started within 60 min');
    assert.equal((await job(waiting)).error?.code, 'queue-time-limit-exceeded');
    assert.match((await job(waiting)).error?.message ?? '', /DOCWRIGHT_QUEUE_TIME_LIMIT_MINUTES/);
    const atSeventyOne = await sweepRuns(t.app.store.db, { now: minutes(71), ...limits });
    assert.equal(atSeventyOne.timedOut.length, 1);
    const timedOut = await job(late);
    assert.equal(timedOut.status, 'failed');
    assert.equal(timedOut.error?.code, 'time-limit-exceeded');
  });

  test('a job waiting behind the per-project cap is not charged for its wait', async () => {
    let release!: () => void;
    const holding = new Promise<void>((resolve) => {
      release = resolve;
    });
    start(
      async (job, run) => {
        if (run.prompt === 'holds the slot') await holding;
        return { status: 'completed', prLink: null, branch: null, summary: `did ${job.id}` };
      },
      { projectConcurrency: 1, jobTimeLimitMs: 400 },
    );
    const first = await create('holds the slot');
    const second = await create('waits for the slot');
    await sleep(700);
    assert.equal((await run(second)).status, 'queued', 'the project’s one slot is taken');
    release();
    const done = await waitFor(async () =>
      (await job(second)).status !== 'active' ? job(second) : undefined,
    );
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal((await job(first)).status, 'failed', 'the first ran past its 400 ms');
  });

  test('a run still going at the time limit is aborted by its worker', async () => {
    const { runner, calls } = controllableRunner();
    start(runner, { jobTimeLimitMs: 300 });
    const id = await create();
    const call = await waitFor(async () => calls.find((c) => c.job.id === id));
    await waitFor(async () => call.signal.aborted, 5_000, 'the time limit');
    const failed = await waitFor(async () => ((await job(id)).status === 'failed' ? job(id) : undefined));
    assert.equal(failed.error?.code, 'time-limit-exceeded');
  });
});
