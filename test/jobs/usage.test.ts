import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { claimNextRun } from '../../src/jobs/queue/claim.ts';
import { releaseLease } from '../../src/jobs/queue/lease.ts';
import { jobSpending, recordUsage } from '../../src/jobs/usage.ts';
import type { RunnableRun, Runner } from '../../src/pipeline/runner.ts';
import { Worker } from '../../src/worker/worker.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createJob, firstRun, waitFor } from '../helpers/worker.ts';

describe('usage accrues as it is spent; budgets are per job and per project month', () => {
  let t: TestApp;
  let p: SeededProject;
  let clock = new Date('2031-03-31T23:00:00.000Z');
  const workers: Worker[] = [];
  const start = (runner: Runner) => {
    const worker = new Worker(t.app, { runner, pollMs: 50, cancelCheckMs: 50 });
    worker.start();
    workers.push(worker);
  };
  const job = (id: string) => t.app.jobs.get(p.projectId, id);
  const ended = (id: string) =>
    waitFor(async () => {
      const j = await job(id);
      return j.status === 'active' ? undefined : j;
    });

  before(async () => {
    t = await startTestApp({ now: () => clock });
    p = await seedProject(t.app, { rateLimit: 10_000 });
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  });
  after(() => t.close());

  test('a failed job and a cancelled job show the tokens their runs spent', async () => {
    start(async (_job, run, { signal, recordUsage }) => {
      await recordUsage({ inputTokens: 300, outputTokens: 40 });
      if (run.prompt === 'fail')
        return { status: 'failed', error: { code: 'budget-exceeded', message: 'out' } };
      await recordUsage({ inputTokens: 200, outputTokens: 10 });
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      return { status: 'completed', prLink: null, branch: null, summary: null };
    });
    const failed = await ended(await createJob(t.app, p.projectId, 'fail'));
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.usage, { inputTokens: 300, outputTokens: 40 });

    const cancelledId = await createJob(t.app, p.projectId, 'wait');
    await waitFor(async () => (await job(cancelledId)).usage?.inputTokens === 500);
    await t.app.jobs.archive(p.projectId, cancelledId);
    const cancelled = await job(cancelledId);
    assert.equal(cancelled.status, 'archived');
    assert.deepEqual(cancelled.usage, { inputTokens: 500, outputTokens: 50 });
    const run = await firstRun(t.app, cancelledId);
    assert.deepEqual([run.steps, run.input_tokens, run.output_tokens], [2, 500, 50]);
  });

  test('a first run handed back and claimed again is told what its earlier attempt spent', async () => {
    const id = await createJob(t.app, p.projectId, 'handed back');
    const claim = async () =>
      (await claimNextRun(t.app, { workerId: 'w1', now: clock, leaseMs: 60_000, projectConcurrency: 100 }))
        ?.run;
    const first = (await claim())!;
    assert.equal(first.job_id, id);
    const fresh = await jobSpending(t.app.store.db, first, clock);
    assert.deepEqual([fresh.steps, fresh.tokens], [0, 0]);
    for (let i = 0; i < 2; i++)
      await recordUsage(t.app.store.db, {
        run: first,
        usage: { inputTokens: 100, outputTokens: 20 },
        at: clock,
      });
    // A shutdown hands the attempt back; the next claim takes the same run (attempt number kept).
    assert.equal(
      await releaseLease(t.app.store.db, { runId: first.id, workerId: 'w1', attempt: first.attempts }),
      true,
    );
    const again = (await claim())!;
    assert.equal(again.id, first.id);
    const spent = await jobSpending(t.app.store.db, again, clock);
    assert.deepEqual([spent.steps, spent.tokens], [2, 240]);
  });

  test('a follow-up run is told what the job spent before it', async () => {
    const runs: RunnableRun[] = [];
    start(async (_job, run, { recordUsage }) => {
      runs.push(run);
      for (let i = 0; i < 3; i++) await recordUsage({ inputTokens: 100, outputTokens: 20 });
      return { status: 'completed', prLink: null, branch: null, summary: `run ${run.seq}` };
    });
    const id = await createJob(t.app, p.projectId, 'first');
    await ended(id);
    await t.app.jobs.message(p.projectId, id, { prompt: 'second' });
    await ended(id);
    assert.deepEqual(
      runs.map((r) => [r.seq, r.spent.steps, r.spent.tokens]),
      [
        [1, 0, 0],
        [2, 3, 360],
      ],
    );
    assert.deepEqual((await job(id)).usage, { inputTokens: 600, outputTokens: 120 });
  });

  test('a project whose monthly token budget is spent gets 429 token-budget-exceeded until the month ends', async () => {
    const q = await seedProject(t.app, { rateLimit: 10_000, monthlyTokenBudget: 1_000 });
    const create = (prompt: string) =>
      t.server.inject({
        method: 'POST',
        url: `/v2/agent/${q.projectId}/job`,
        headers: { ...bearer(q.key), 'content-type': 'application/json' },
        payload: { prompt },
      });
    const first = await create('within the budget');
    assert.equal(first.statusCode, 201);
    const jobId = first.json().id as string;
    const run = await firstRun(t.app, jobId);
    await recordUsage(t.app.store.db, { run, usage: { inputTokens: 900, outputTokens: 100 }, at: clock });

    const refused = await create('over the budget');
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().code, 'token-budget-exceeded');
    assert.match(refused.json().error, /1000 of its 1000 model tokens for 2031-03.*2031-04-01/);
    assert.equal(refused.headers['retry-after'], '3600', 'an hour until April');
    const followUp = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${q.projectId}/job/${jobId}/message`,
      headers: { ...bearer(q.key), 'content-type': 'application/json' },
      payload: { prompt: 'more' },
    });
    assert.equal(followUp.statusCode, 429, 'a follow-up is new work too');
    assert.equal(followUp.json().code, 'token-budget-exceeded');
    await t.app.jobs.archive(q.projectId, jobId);
    assert.equal(
      (await t.app.jobs.rateLimit(q.projectId))?.remaining,
      10_000 - 1,
      'refused requests count nothing against the rate limit',
    );

    // Another project is not affected; raising the budget, or a new month, lets jobs in again.
    assert.equal((await t.app.jobs.create(p.projectId, { prompt: 'other project' })).created, true);
    await t.app.projects.update(q.projectId, { monthlyTokenBudget: 5_000 });
    assert.equal((await create('after raising the budget')).statusCode, 201);
    await t.app.projects.update(q.projectId, { monthlyTokenBudget: 1_000 });
    assert.equal((await create('spent again')).statusCode, 429);
    clock = new Date('2031-04-01T00:00:01.000Z');
    assert.equal((await create('in April')).statusCode, 201);
  });
});
