import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import {
  createJob,
  killWorkerProcesses,
  readRunLog,
  startWorkerProcess,
  waitFor,
} from '../helpers/worker.ts';

const JOBS = 500;
const PROJECTS = 5;
const WORKERS = 4;

const onlyPostgres =
  testDialect === 'postgres'
    ? false
    : 'skipped: many worker processes claiming at once is a PostgreSQL scenario (run with DOCWRIGHT_TEST_DB=postgres)';

describe('worker processes at scale (PostgreSQL, docs/worker.mdx)', { skip: onlyPostgres }, () => {
  let t: TestApp;
  let logDir: string;
  before(async () => {
    t = await startTestApp();
    logDir = mkdtempSync(path.join(tmpdir(), 'docwright-scale-'));
  });
  after(async () => {
    try {
      await killWorkerProcesses();
      await t?.close();
    } finally {
      if (logDir) rmSync(logDir, { recursive: true, force: true });
    }
  });

  test(`${WORKERS} worker processes run ${JOBS} jobs: each run exactly once, work shared`, async (ctx) => {
    // Pass or fail, the workers stop with the test (those still starting too), before the
    // database they hold connections to is dropped.
    ctx.after(() => killWorkerProcesses());
    const projects = await Promise.all(
      Array.from({ length: PROJECTS }, () => seedProject(t.app, { rateLimit: 100_000 })),
    );
    const jobIds: string[] = [];
    const createJobs = async (from: number, to: number) => {
      // A few at a time, as API traffic would.
      for (let i = from; i < to; i += 10) {
        const batch = Array.from({ length: Math.min(10, to - i) }, (_, k) =>
          createJob(t.app, projects[(i + k) % PROJECTS]!.projectId, `job ${i + k}`),
        );
        jobIds.push(...(await Promise.all(batch)));
      }
    };

    // Half the jobs wait as a backlog that all the workers' slots claim from at
    // once; the rest arrive while the workers are running.
    await createJobs(0, JOBS / 2);
    const log = path.join(logDir, 'runs.log');
    const workers = await Promise.all(
      Array.from({ length: WORKERS }, () =>
        startWorkerProcess({
          ...t.database.env,
          TEST_RUNNER: 'noop',
          TEST_RUN_LOG: log,
          DOCWRIGHT_WORKER_CONCURRENCY: '4',
          DOCWRIGHT_PROJECT_CONCURRENCY: '1000',
        }),
      ),
    );
    await createJobs(JOBS / 2, JOBS);

    const pending = () =>
      t.app.store.db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('status', '!=', 'completed')
        .executeTakeFirstOrThrow();
    await waitFor(async () => Number((await pending()).n) === 0, {
      timeoutMs: 40_000,
      intervalMs: 200,
      message: () => `jobs still not completed:\n${workers.map((w) => w.output()).join('\n')}`,
    });

    const jobs = await t.app.store.db.selectFrom('jobs').select(['id', 'status']).execute();
    assert.equal(jobs.length, JOBS);
    assert.ok(jobs.every((j) => j.status === 'completed'));
    const runs = await t.app.store.db
      .selectFrom('job_runs')
      .select(['id', 'job_id', 'status', 'attempts'])
      .execute();
    assert.deepEqual(new Set(runs.map((r) => r.job_id)), new Set(jobIds));
    assert.ok(runs.every((r) => r.status === 'succeeded' && r.attempts === 1));

    const entries = readRunLog(log);
    const timesRun = new Map<string, number>();
    for (const e of entries) timesRun.set(e.runId, (timesRun.get(e.runId) ?? 0) + 1);
    const twice = [...timesRun].filter(([, n]) => n > 1);
    assert.deepEqual(twice, [], 'no run was executed twice');
    assert.equal(entries.length, JOBS);
    assert.deepEqual(new Set(timesRun.keys()), new Set(runs.map((r) => r.id)));

    const perWorker = new Map<number, number>();
    for (const e of entries) perWorker.set(e.pid, (perWorker.get(e.pid) ?? 0) + 1);
    const pids = new Set(workers.map((w) => w.pid));
    assert.ok([...perWorker.keys()].every((pid) => pids.has(pid)));
    assert.ok(perWorker.size > 1, `more than one worker did work: ${JSON.stringify([...perWorker])}`);
    ctx.diagnostic(`runs per worker process: ${[...perWorker.values()].join(', ')}`);
  });
});
