import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CompiledQuery } from 'kysely';
import pg from 'pg';
import { claimNextRun } from '../../src/jobs/queue/claim.ts';
import { finishRun } from '../../src/jobs/queue/finish.ts';
import { lostLeases, releaseLease, renewLease } from '../../src/jobs/queue/lease.ts';
import { recordRunEvent } from '../../src/jobs/queue/run-events.ts';
import { sweepRuns } from '../../src/jobs/queue/sweep.ts';
import type { RunOutcome } from '../../src/jobs/run-outcome.ts';
import type { JobRunRow } from '../../src/store/schema.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_POSTGRES_URL, testDialect } from '../helpers/database.ts';
import { createJob, eventTypes, jobRow } from '../helpers/worker.ts';

const completed: RunOutcome = {
  status: 'completed',
  prLink: 'https://example.test/pr/1',
  branch: 'docwright/x',
  summary: 'done',
};

describe('finishRun writes only for the worker that holds the running run', () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app, { rateLimit: 1000 });
  });
  after(() => t.close());

  /** `workerId`'s claim of the oldest queued run: the run, or undefined when none is queued. */
  const claimAs = async (
    workerId: string,
    now = new Date(),
    deps: Parameters<typeof claimNextRun>[0] = t.app,
  ) => (await claimNextRun(deps, { workerId, now, leaseMs: 60_000, projectConcurrency: 100 }))?.run;

  /** A new job whose run `workerId` has claimed. */
  async function claimed(workerId: string) {
    const jobId = await createJob(t.app, p.projectId);
    const run = await claimAs(workerId);
    assert.equal(run?.job_id, jobId);
    return run!;
  }

  /** Names `owner` as the run's lease holder, as a rival (or the run's own, late) worker would find it. */
  const setOwner = (runId: string, owner: string) =>
    t.app.store.db.updateTable('job_runs').set({ lease_owner: owner }).where('id', '=', runId).execute();
  const storedRun = (runId: string) =>
    t.app.store.db.selectFrom('job_runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
  /** What w1 gets for finishing `run` as completed. */
  const finishAsW1 = (run: JobRunRow) =>
    finishRun(t.app, { run, workerId: 'w1', outcome: completed, now: new Date() });

  test('a claim answers its run and the run’s job as a read of their rows would', async () => {
    const jobId = await createJob(t.app, p.projectId);
    const claim = await claimNextRun(t.app, {
      workerId: 'w-job',
      now: new Date(),
      leaseMs: 60_000,
      projectConcurrency: 100,
    });
    assert.ok(claim);
    // Same values and types (PostgreSQL's answer travels as JSON): numbers, nulls and text alike.
    assert.deepStrictEqual({ ...claim.run }, { ...(await storedRun(claim.run.id)) });
    assert.deepStrictEqual({ ...claim.job }, { ...(await jobRow(t.app, jobId)) });
  });

  test('a claim takes a lease and records its run.started event with the run; a claim that finds nothing records none', async () => {
    const run = await claimed('w-started');
    const stored = await storedRun(run.id);
    assert.deepEqual(
      [stored.status, stored.lease_owner, stored.attempts, stored.started_at !== null],
      ['running', 'w-started', 1, true],
    );
    // The lease lasts leaseMs (60 s) from the claim's clock.
    const leaseMs = Date.parse(stored.lease_expires_at!) - Date.parse(stored.started_at!);
    assert.equal(leaseMs, 60_000);
    const events = await t.app.store.db
      .selectFrom('job_events')
      .select(['type', 'run_id', 'data'])
      .where('job_id', '=', run.job_id)
      .orderBy('id')
      .execute();
    assert.deepEqual(events.map((e) => ({ ...e, data: JSON.parse(e.data) })).slice(1), [
      { type: 'run.started', run_id: run.id, data: { attempt: 1, workerId: 'w-started', seq: 1 } },
    ]);
    assert.equal(events[0]?.type, 'job.created');
    const countEvents = async () =>
      Number(
        (
          await t.app.store.db
            .selectFrom('job_events')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await countEvents();
    const none = await claimAs('w-started');
    assert.equal(none, undefined);
    assert.equal(await countEvents(), before);
  });

  test('the holder finishes the run once; a second call (a retry after a lost answer) writes nothing', async () => {
    const run = await claimed('w1');
    assert.equal(await finishRun(t.app, { run, workerId: 'w1', outcome: completed, now: new Date() }), true);
    assert.equal(
      await finishRun(t.app, {
        run,
        workerId: 'w1',
        outcome: { status: 'failed', error: { code: 'x', message: 'second' } },
        now: new Date(),
      }),
      false,
    );
    const job = await jobRow(t.app, run.job_id);
    assert.equal(job.status, 'completed');
    assert.equal(job.error_code, null);
    assert.equal((await eventTypes(t.app, run.job_id)).filter((e) => e.startsWith('job.')).length, 2);
  });

  test('the claim and the end of a run each tell the job’s followers of its new event', async () => {
    const heard: string[] = [];
    let hear: (() => void) | undefined;
    const unsubscribe = t.app.signals.subscribe((signal) => {
      if (signal.kind !== 'job-event') return;
      heard.push(signal.jobId);
      hear?.();
    });
    const announcement = () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no job-event within 5 s')), 5_000);
        hear = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    try {
      const jobId = await createJob(t.app, p.projectId);
      // PostgreSQL: the listener is connected, and has heard what the create announced.
      await t.app.signals.caughtUp?.();
      heard.length = 0;
      const started = announcement();
      const run = await claimAs('w1');
      await started;
      assert.deepEqual(heard, [jobId]);
      const ended = announcement();
      assert.equal(await finishAsW1(run!), true);
      await ended;
      assert.deepEqual(heard, [jobId, jobId]);
    } finally {
      unsubscribe();
    }
  });

  test('PostgreSQL: a claim is one statement, and so is a plain ending; one with a subscribed endpoint takes the transaction', {
    skip: testDialect === 'postgres' ? false : 'round trips are PostgreSQL’s',
  }, async () => {
    // Counts the named statements (one round trip each); the transaction's way uses none.
    let prepared = 0;
    const store = t.app.store;
    const deps = {
      signals: { publish: async () => {} },
      store: {
        ...store,
        prepared: <R>(query: CompiledQuery) => {
          prepared++;
          return store.prepared!<R>(query);
        },
      },
    };
    const claim = () => claimAs('w1', new Date(), deps);
    const statements = () => {
      const counted = prepared;
      prepared = 0;
      return counted;
    };

    await createJob(t.app, p.projectId);
    const run = await claim();
    assert.ok(run);
    assert.equal(statements(), 1, 'claim');
    assert.equal(await claim(), undefined);
    assert.equal(statements(), 1, 'a claim that finds nothing');
    assert.equal(await finishRun(deps, { run, workerId: 'w1', outcome: completed, now: new Date() }), true);
    assert.equal(statements(), 1, 'plain ending');
    assert.equal((await jobRow(t.app, run.job_id)).status, 'completed');

    const endpoint = await t.app.webhooks.createEndpoint(
      p.projectId,
      { url: 'http://127.0.0.1:9/hook' },
      { allowPrivate: true },
    );
    try {
      await createJob(t.app, p.projectId);
      const subscribed = await claim();
      statements();
      assert.equal(
        await finishRun(deps, { run: subscribed!, workerId: 'w1', outcome: completed, now: new Date() }),
        true,
      );
      // The statement found the endpoint and wrote nothing; the transaction wrote the message.
      assert.equal(statements(), 1);
      const messages = await store.db
        .selectFrom('webhook_messages')
        .select('type')
        .where('job_id', '=', subscribed!.job_id)
        .execute();
      assert.deepEqual(messages, [{ type: 'job.completed' }]);
    } finally {
      await t.app.webhooks.deleteEndpoint(endpoint.id);
    }
  });

  test('a failed follow-up keeps the link, branch and summary an earlier run left on the job', async () => {
    const first = await claimed('w1');
    assert.equal(await finishAsW1(first), true);
    await t.app.jobs.message(p.projectId, first.job_id, { prompt: 'and the changelog' });
    const followUp = await claimAs('w1');
    assert.equal(followUp?.seq, 2);
    const failed: RunOutcome = { status: 'failed', error: { code: 'model-error', message: 'no' } };
    assert.equal(
      await finishRun(t.app, { run: followUp!, workerId: 'w1', outcome: failed, now: new Date() }),
      true,
    );
    const job = await jobRow(t.app, first.job_id);
    assert.deepEqual(
      [job.status, job.pr_link, job.branch, job.summary, job.error_code, job.error_message],
      ['failed', completed.prLink, completed.branch, completed.summary, 'model-error', 'no'],
    );
    const run = await storedRun(followUp!.id);
    assert.deepEqual([run.status, run.summary, run.error_code], ['failed', null, 'model-error']);
  });

  test('a run ends, but its job is moved out of active only from active', async () => {
    const run = await claimed('w1');
    // As a change committed between the run's end and its job's would leave it.
    await t.app.store.db
      .updateTable('jobs')
      .set({ status: 'archived' })
      .where('id', '=', run.job_id)
      .execute();
    assert.equal(await finishAsW1(run), true);
    assert.equal((await storedRun(run.id)).status, 'succeeded');
    const job = await jobRow(t.app, run.job_id);
    assert.deepEqual([job.status, job.pr_link, job.summary], ['archived', null, null]);
  });

  test('a worker whose lease was taken writes nothing: not the run, not the job, no event', async () => {
    const run = await claimed('w1');
    await setOwner(run.id, 'w2');
    assert.equal(await finishAsW1(run), false);
    const stored = await storedRun(run.id);
    assert.equal(stored.status, 'running');
    assert.equal(stored.lease_owner, 'w2');
    assert.equal((await jobRow(t.app, run.job_id)).status, 'active');
    assert.deepEqual(await eventTypes(t.app, run.job_id), ['job.created', 'run.started']);
  });

  test('a run the sweeper failed (time limit) stays failed, though its worker still names itself', async () => {
    const run = await claimed('w1');
    // The sweeper fails it; the worker's row is then as a slow worker would find it.
    const later = new Date(Date.now() + 3 * 3_600_000);
    await sweepRuns(t.app.store.db, {
      now: later,
      maxAttempts: 3,
      jobTimeLimitMs: 3_600_000,
      queueTimeLimitMs: 3_600_000,
    });
    await setOwner(run.id, 'w1');
    assert.equal(await finishAsW1(run), false);
    const stored = await storedRun(run.id);
    assert.equal(stored.status, 'failed');
    assert.equal(stored.error_code, 'time-limit-exceeded');
    assert.equal((await jobRow(t.app, run.job_id)).error_code, 'time-limit-exceeded');
    assert.ok(!(await eventTypes(t.app, run.job_id)).includes('job.completed'));
  });

  test('a worker that lost a run and claimed it again holds only the new attempt: the old one cannot finish, renew, record or release it', async () => {
    const old = await claimed('w1');
    // Its lease expires (a stalled process) and the sweeper requeues the run; w1 claims it again.
    // (The test before this one left no other run running or queued.)
    const later = new Date(Date.now() + 120_000);
    const swept = await sweepRuns(t.app.store.db, {
      now: later,
      maxAttempts: 3,
      jobTimeLimitMs: 3_600_000,
      queueTimeLimitMs: 3_600_000,
    });
    assert.deepEqual(swept.requeued, [old.id]);
    const again = await claimAs('w1', later);
    assert.equal(again?.id, old.id);
    assert.deepEqual([old.attempts, again!.attempts], [1, 2]);

    const lease = (run: JobRunRow) => ({ runId: run.id, workerId: 'w1', attempt: run.attempts });
    const until = new Date(later.getTime() + 60_000);
    assert.equal(await renewLease(t.app.store.db, { ...lease(old), until }), false, 'renew, old attempt');
    const event = (run: JobRunRow) => ({
      ...lease(run),
      jobId: run.job_id,
      type: 'test.step',
      data: { attempt: run.attempts },
      now: later,
    });
    assert.equal(await recordRunEvent(t.app.store.db, event(old)), false, 'event, old attempt');
    assert.deepEqual(await lostLeases(t.app.store.db, [lease(old), lease(again!)]), [lease(old)]);
    assert.equal(await releaseLease(t.app.store.db, lease(old)), false, 'release, old attempt');
    assert.equal(await finishAsW1(old), false, 'finish, old attempt');
    const stored = await storedRun(old.id);
    assert.deepEqual([stored.status, stored.lease_owner, stored.attempts], ['running', 'w1', 2]);
    assert.equal((await jobRow(t.app, old.job_id)).status, 'active');

    // The new attempt is the one w1 holds.
    assert.equal(await renewLease(t.app.store.db, { ...lease(again!), until }), true);
    assert.equal(await recordRunEvent(t.app.store.db, event(again!)), true);
    assert.equal(await finishAsW1(again!), true);
    assert.equal((await jobRow(t.app, old.job_id)).status, 'completed');
    assert.deepEqual(await eventTypes(t.app, old.job_id), [
      'job.created',
      'run.started',
      'run.requeued',
      'run.started',
      'test.step',
      'job.completed',
    ]);
  });
});

describe('archiving a job while its run records usage', () => {
  let t: TestApp;
  let p: SeededProject;
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
  });
  after(() => t.close());

  test('both go through: archive writes the run before the job, as recording usage does (no deadlock)', {
    skip: testDialect === 'postgres' ? false : 'row locks are PostgreSQL’s (SQLite has one writer)',
  }, async () => {
    const jobId = await createJob(t.app, p.projectId);
    const run = await t.app.store.db
      .selectFrom('job_runs')
      .select('id')
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    // Another process, midway through recordUsage (src/jobs/usage.ts): its run row is written.
    const usage = new pg.Client({
      connectionString: TEST_POSTGRES_URL,
      options: `-c search_path=${t.database.schema}`,
    });
    await usage.connect();
    try {
      await usage.query('begin');
      await usage.query('update job_runs set steps = steps + 1 where id = $1', [run.id]);
      const archived = t.app.jobs.archive(p.projectId, jobId);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // ...and now its job row, while the archive waits.
      await usage.query('update jobs set input_tokens = coalesce(input_tokens, 0) + 5 where id = $1', [
        jobId,
      ]);
      await usage.query('commit');
      assert.equal((await archived).status, 'archived');
    } finally {
      await usage.end();
    }
    const job = await jobRow(t.app, jobId);
    assert.equal(job.input_tokens, 5);
    const stored = await t.app.store.db
      .selectFrom('job_runs')
      .select(['status', 'steps'])
      .where('id', '=', run.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored, { status: 'cancelled', steps: 1 });
  });
});
