// Deleting a project (projects.delete, as the CLI and the dashboard do it): everything of the
// project goes (its context repositories too), nothing of another project does; a running job is cancelled and its worker stops
// it; the project's keys stop working at once; its git mirrors on this machine are removed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { recordRun } from '../../src/automations/run-store.ts';
import type { Runner } from '../../src/pipeline/runner.ts';
import type { Signal } from '../../src/store/signals.ts';
import { Worker } from '../../src/worker/worker.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

/** Tables that hold rows of a project, by the column naming it. */
const PROJECT_TABLES = [
  'jobs',
  'job_runs',
  'api_keys',
  'webhook_endpoints',
  'webhook_messages',
  'webhook_deliveries',
  'idempotency_keys',
  'rate_limit_uses',
  'rate_limit_counts',
  'project_usage',
  'automations',
  'automation_runs',
  'hook_deliveries',
  'automation_poll_cursors',
  'context_repositories',
] as const;

describe('deleting a project', () => {
  let t: TestApp;
  let worker: Worker;
  let doomed: SeededProject;
  let kept: SeededProject;
  /** Jobs whose run the worker stopped, with what recording usage after that gave. */
  const stopped = new Map<string, string>();
  /** Jobs whose run has recorded its first usage. */
  const startedJobs = new Set<string>();
  let started: Promise<string>;
  let markStarted: (jobId: string) => void;

  // The agent's place in the worker: it says something and spends tokens, then works until it is stopped.
  const runner: Runner = async (job, _run, { signal, emit, recordUsage }) => {
    await emit('agent.text', { text: 'working on it' });
    await recordUsage({ inputTokens: 100, outputTokens: 10 });
    startedJobs.add(job.id);
    markStarted(job.id);
    if (!signal.aborted)
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    // Tokens the model reported as the run was stopped: nothing to charge them to, and no error.
    stopped.set(
      job.id,
      await recordUsage({ inputTokens: 5, outputTokens: 1 }).then(() => 'recorded', String),
    );
    return { status: 'failed', error: { code: 'internal-error', message: 'stopped' } };
  };

  const rowsOf = async (projectId: string) => {
    const counts: Record<string, number> = {};
    for (const table of PROJECT_TABLES) {
      const rows = await t.app.store.db
        .selectFrom(table)
        .select('project_id')
        .where('project_id', '=', projectId)
        .execute();
      if (rows.length > 0) counts[table] = rows.length;
    }
    return counts;
  };

  before(async () => {
    t = await startTestApp();
    started = new Promise((resolve) => {
      markStarted = resolve;
    });
    worker = new Worker(t.app, { runner, pollMs: 50 });
    worker.start();
    [doomed, kept] = [await seedProject(t.app), await seedProject(t.app)];
  });
  after(async () => {
    await worker?.stop(0);
    await t?.close();
  });

  test('removes the project with its jobs, keys, webhooks and mirror; cancels its running job; keeps the other project', async () => {
    const url = await t.listen();
    const api = (project: SeededProject, key: string, route: string, method = 'GET') =>
      fetch(`${url}/v2/agent/${project.projectId}${route}`, { method, headers: bearer(key) });
    // Everything a project accumulates: a running job, a finished one with an idempotent create,
    // a webhook endpoint with a delivery, and a git mirror.
    const running = await t.app.jobs.create(doomed.projectId, { prompt: 'Work until stopped' });
    const runningId = running.job.id;
    assert.equal(await started, runningId);
    await t.app.webhooks.createEndpoint(doomed.projectId, {
      url: 'https://hooks.example.com/a',
      events: ['job.archived'],
    });
    // An automation with a skipped run, a stored inbound delivery and a poll cursor.
    const automation = await t.app.automations.create(doomed.projectId, {
      name: 'Docs',
      trigger: { type: 'manual' },
      instruction: 'Update the docs',
    });
    await recordRun(t.app.store.db, ['manual:1'], {
      automationId: automation.id,
      projectId: doomed.projectId,
      triggerType: 'manual',
      changes: [],
      scheduledFor: null,
      outcome: 'skipped',
      reason: 'disabled',
      at: new Date(),
    });
    await t.app.automations.deliveries.store({
      projectId: doomed.projectId,
      name: 'docs',
      deliveryId: 'd-1',
      host: 'github',
      event: 'push',
      contentType: 'application/json',
      body: new TextEncoder().encode('{}'),
    });
    await t.app.store.db
      .insertInto('automation_poll_cursors')
      .values({ project_id: doomed.projectId, repository: 'docs', cursor: '{}', updated_at: 'x' })
      .execute();
    for (const p of [doomed, kept]) {
      await t.app.contextRepositories.add(p.projectId, {
        name: 'api',
        repository: 'https://github.com/a/api',
      });
    }
    const archived = await t.app.jobs.create(
      doomed.projectId,
      { prompt: 'Then archived' },
      {
        key: 'k-1',
        fingerprint: 'f',
      },
    );
    await t.app.jobs.archive(doomed.projectId, archived.job.id);
    const keptJob = (
      await t.app.jobs.create(kept.projectId, { prompt: 'Stays' }, { key: 'k-1', fingerprint: 'f' })
    ).job;
    // The kept project's job runs too (and records usage): its rows are counted once it has.
    await waitFor(async () => startedJobs.has(keptJob.id), { timeoutMs: 15_000 });
    const mirrors = t.app.config.mirrors.dir;
    mkdirSync(mirrors, { recursive: true });
    const mirrorOf = (p: SeededProject) => path.join(mirrors, `${p.projectId}-0123456789abcdef.git`);
    for (const p of [doomed, kept]) execFileSync('git', ['init', '-q', '--bare', mirrorOf(p)]);

    // The key is verified (and remembered) before the deletion.
    assert.equal((await api(doomed, doomed.key, '/jobs')).status, 200);
    assert.equal((await api(doomed, doomed.key, `/job/${runningId}`)).status, 200);
    assert.deepEqual(Object.keys(await rowsOf(doomed.projectId)).sort(), [...PROJECT_TABLES].sort());
    const keptBefore = await rowsOf(kept.projectId);

    const signals: Signal[] = [];
    const unsubscribe = t.app.signals.subscribe((s) => signals.push(s));
    const impact = await t.app.projects.deletionImpact(doomed.projectId);
    const result = await t.app.projects.delete(doomed.projectId);
    unsubscribe();
    assert.deepEqual(impact, { jobs: 2, activeJobs: 1, keys: 1, webhookEndpoints: 1 });
    assert.deepEqual(result.deleted, { ...impact, mirrors: 1 });
    assert.equal(result.id, doomed.projectId);

    // Keys stop working at once: on the route that trusts remembered keys and on the poll.
    for (const route of ['/jobs', `/job/${runningId}`]) {
      const res = await api(doomed, doomed.key, route);
      assert.equal(res.status, 401, route);
    }
    // The running job's worker stops it, and writes nothing more for it.
    await waitFor(async () => stopped.has(runningId), { timeoutMs: 15_000 });
    assert.equal(stopped.get(runningId), 'recorded', 'late usage of the deleted run fails nothing');
    await worker.stop(0);
    assert.ok(signals.some((s) => s.kind === 'run-cancelled'));
    assert.deepEqual(await rowsOf(doomed.projectId), {}, 'no row of the project is left');
    const events = await t.app.store.db
      .selectFrom('job_events')
      .select('id')
      .where('job_id', '=', runningId)
      .execute();
    assert.deepEqual(events, []);
    assert.equal(existsSync(mirrorOf(doomed)), false, 'its mirror is removed');

    // The other project is untouched, its idempotency key included.
    assert.deepEqual(await rowsOf(kept.projectId), keptBefore);
    assert.equal(existsSync(mirrorOf(kept)), true);
    assert.equal((await api(kept, kept.key, `/job/${keptJob.id}`)).status, 200);
    // Its key on the deleted project's path: the project is gone.
    const gone = await api(doomed, kept.key, '/jobs');
    assert.equal(gone.status, 404);
    assert.equal(((await gone.json()) as { code: string }).code, 'project-not-found');
    await assert.rejects(t.app.projects.delete(doomed.projectId), { code: 'project-not-found' });
  });
});
