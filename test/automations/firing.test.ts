// Firing automations on both databases (docs/automations.mdx): schedules driven by an injected clock (a
// clock jump fires once, a time missed by over an hour is skipped `missed`, a batch without
// changes is `no-changes-needed`); a change found by poll and then by webhook runs once; two
// processes sharing one database and receiving the same change make one run; the rate limit
// skips runs `rate-limited`; a run's outcome follows its job.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type App, openApp } from '../../src/app.ts';
import { mergedChangeArrival } from '../../src/automations/arrivals.ts';
import type { ListChanges } from '../../src/automations/change-listing.ts';
import type { ContextRepositories } from '../../src/automations/repositories.ts';
import { recordRun } from '../../src/automations/run-store.ts';
import { loadConfig } from '../../src/config.ts';
import { commitMessage } from '../../src/git/commit.ts';
import type { ChangeCursor, MergedPullRequest } from '../../src/git/hosts/index.ts';
import { createLogger } from '../../src/logger.ts';
import { buildServer } from '../../src/server.ts';
import { AutomationLoop } from '../../src/worker/automation-loop.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { samplePayload, signedHeaders } from '../helpers/hook-deliveries.ts';

const SECRET = 'whsec-firing-test-0123456789';
const contexts: ContextRepositories = {
  accessFor: async () => [],
  webhookSecretFor: async (_p, name) => (name === 'docs' ? SECRET : undefined),
};

describe('schedules, with an injected clock', () => {
  let t: TestApp;
  let clock = new Date('2026-03-02T08:00:00.000Z');
  let projectId: string;
  let loop: AutomationLoop;
  before(async () => {
    t = await startTestApp({ now: () => clock, contexts, env: { DOCWRIGHT_RATE_LIMIT: '100' } });
    projectId = (await seedProject(t.app)).projectId;
    loop = new AutomationLoop(t.app, { pollSeconds: 0 });
  });
  after(() => t.close());

  const runsOf = async (id: string) => (await t.app.automations.runs(projectId, id)).runs;

  test('a daily schedule fires once for 09:00 across a clock jump back and forth, and from two checkers', async () => {
    clock = new Date('2026-03-02T07:30:00.000Z');
    const daily = await t.app.automations.create(projectId, {
      name: 'Daily',
      trigger: { type: 'schedule', cron: '0 9 * * *', timeZone: 'Europe/Berlin' },
      instruction: 'Fix broken links.',
    });
    clock = new Date('2026-03-02T07:59:59.000Z');
    assert.deepEqual(
      (await loop.tickSchedules(clock)).created,
      [],
      'nothing before 09:00 Berlin (08:00 UTC)',
    );
    clock = new Date('2026-03-02T08:00:30.000Z');
    const other = new AutomationLoop(t.app, { pollSeconds: 0 });
    const [a, b] = await Promise.all([loop.tickSchedules(clock), other.tickSchedules(clock)]);
    assert.equal(a.created.length + b.created.length, 1, 'two checkers at once: one run');
    // The clock jumps back an hour, then forward again past 09:00.
    for (const at of ['2026-03-02T07:00:00.000Z', '2026-03-02T08:10:00.000Z', '2026-03-02T08:59:00.000Z']) {
      clock = new Date(at);
      assert.deepEqual((await loop.tickSchedules(clock)).created, [], at);
    }
    const runs = await runsOf(daily.id);
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.trigger.type, 'schedule');
    assert.equal(runs[0]!.trigger.scheduledFor, '2026-03-02T08:00:00.000Z');
    assert.ok(runs[0]!.jobId);
    // The next day's time fires again.
    clock = new Date('2026-03-03T08:00:05.000Z');
    assert.equal((await loop.tickSchedules(clock)).created.length, 1);
    await t.app.automations.delete(projectId, daily.id);
  });

  test('a time missed by over an hour is recorded skipped (missed), once; under an hour it fires', async () => {
    clock = new Date('2026-03-04T06:00:00.000Z');
    const hourly = await t.app.automations.create(projectId, {
      name: 'Morning',
      trigger: { type: 'schedule', cron: '0 7 * * *' },
      instruction: 'Check the docs.',
    });
    // No process ran from 06:00 to 08:30: the 07:00 run is 90 minutes late.
    clock = new Date('2026-03-04T08:30:00.000Z');
    await loop.tickSchedules(clock);
    await loop.tickSchedules(clock);
    let runs = await runsOf(hourly.id);
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.outcome, 'skipped');
    assert.equal(runs[0]!.reason, 'missed');
    assert.equal(runs[0]!.jobId, null);
    // Down again from before 07:00 the next day until 07:59: under an hour late, it fires.
    clock = new Date('2026-03-05T07:59:00.000Z');
    await loop.tickSchedules(clock);
    runs = await runsOf(hourly.id);
    assert.equal(runs.length, 2);
    assert.equal(runs[0]!.outcome, 'running');
    assert.ok(runs[0]!.jobId);
    await t.app.automations.delete(projectId, hourly.id);
  });

  test('a batch with no change merged since the previous run is no-changes-needed, with no job', async () => {
    clock = new Date('2026-03-06T00:00:00.000Z');
    const weekly = await t.app.automations.create(projectId, {
      name: 'Changelog',
      trigger: { type: 'schedule', cron: '0 9 * * 1', batch: true },
      instruction: 'Draft a changelog entry.',
    });
    clock = new Date('2026-03-09T09:00:01.000Z');
    await loop.tickSchedules(clock);
    const runs = await runsOf(weekly.id);
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.outcome, 'no-changes-needed');
    assert.equal(runs[0]!.jobId, null);
    await t.app.automations.delete(projectId, weekly.id);
  });

  test('a disabled schedule does not fire; enabled again, times passed meanwhile never fire', async () => {
    clock = new Date('2026-03-10T00:00:00.000Z');
    const nightly = await t.app.automations.create(projectId, {
      name: 'Nightly',
      trigger: { type: 'schedule', cron: '0 2 * * *' },
      instruction: 'Check.',
      enabled: false,
    });
    clock = new Date('2026-03-10T02:00:10.000Z');
    await loop.tickSchedules(clock);
    assert.equal((await runsOf(nightly.id)).length, 0);
    await t.app.automations.update(projectId, nightly.id, { enabled: true });
    clock = new Date('2026-03-10T02:30:00.000Z');
    await loop.tickSchedules(clock);
    assert.equal((await runsOf(nightly.id)).length, 0, '02:00 passed while disabled');
    await t.app.automations.delete(projectId, nightly.id);
  });
});

describe('changes, the rate limit and outcomes', () => {
  let t: TestApp;
  let base: string;
  let loop: AutomationLoop;
  before(async () => {
    t = await startTestApp({ contexts, env: { DOCWRIGHT_RATE_LIMIT: '100' } });
    base = await t.listen();
    loop = new AutomationLoop(t.app, { pollSeconds: 0, pushSettleMs: 0 });
  });
  after(() => t.close());

  test('a push found by poll and then by webhook runs once', async () => {
    const { projectId, repository } = await seedProject(t.app);
    const automation = await t.app.automations.create(projectId, {
      name: 'Style',
      trigger: { type: 'docs-push' },
      instruction: 'Enforce the style guide.',
    });
    // A commit pushed to main after the automation was created (git dates have whole seconds).
    writeFileSync(path.join(repository, 'guide.mdx'), '# Guide\n');
    const date = new Date(Date.now() + 5_000).toISOString();
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: repository,
        env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      })
        .toString()
        .trim();
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'Add a guide');
    const sha = git('rev-parse', 'HEAD');
    assert.equal(await loop.poll(), 1);
    assert.equal(await loop.poll(), 0, 'the cursor moved on');
    const push = samplePayload('github-push');
    push.after = sha;
    push.commits = [{ ...push.commits[0], id: sha, message: 'Add a guide' }];
    const body = JSON.stringify(push);
    const res = await fetch(`${base}/hooks/${projectId}/docs`, {
      method: 'POST',
      headers: signedHeaders('github', 'push', body, SECRET),
      body,
    });
    assert.equal(res.status, 202);
    await loop.processDeliveries();
    const { runs } = await t.app.automations.runs(projectId, automation.id);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0]!.trigger.changes, [{ repository: 'docs', commit: sha }]);
  });

  test("a commit of docwright's found by poll is its own change: its whole message is read, trailers and all", async () => {
    const { projectId, repository } = await seedProject(t.app);
    const automation = await t.app.automations.create(projectId, {
      name: 'Style',
      trigger: { type: 'docs-push' },
      instruction: 'Enforce the style guide.',
    });
    writeFileSync(path.join(repository, 'style.mdx'), '# Style\n');
    const date = new Date(Date.now() + 5_000).toISOString();
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: repository,
        env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      })
        .toString()
        .trim();
    git('add', '-A');
    // The listing gives the title only; the trailer, with a co-author's paragraph after it, is in the body.
    const message = `${commitMessage('Apply the style guide', '', 'run_1')}\n\nCo-authored-by: Grace <g@example.com>`;
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', message);
    assert.equal(await loop.poll(), 1);
    const { runs } = await t.app.automations.runs(projectId, automation.id);
    assert.deepEqual(
      runs.map((r) => [r.outcome, r.reason, r.jobId]),
      [['skipped', 'own-change', null]],
    );
  });

  test('paths: a change touching none of them is skipped (paths), one touching them runs; files come from the host', async () => {
    const { projectId, repository } = await seedProject(t.app);
    const api = await t.app.automations.create(projectId, {
      name: 'API pages',
      trigger: { type: 'docs-push', paths: ['api/**'] },
      instruction: 'Check the API pages.',
    });
    const guides = await t.app.automations.create(projectId, {
      name: 'Guides',
      trigger: { type: 'docs-push', paths: ['guides/**'] },
      instruction: 'Check the guides.',
    });
    mkdirSync(path.join(repository, 'guides'));
    writeFileSync(path.join(repository, 'guides', 'start.mdx'), '# Start\n');
    const date = new Date(Date.now() + 5_000).toISOString();
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: repository,
        env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'Add a guide');
    assert.equal(await loop.poll(), 2);
    const [apiRun] = (await t.app.automations.runs(projectId, api.id)).runs;
    assert.equal(apiRun?.outcome, 'skipped');
    assert.equal(apiRun?.reason, 'paths');
    assert.equal(apiRun?.jobId, null);
    const [guidesRun] = (await t.app.automations.runs(projectId, guides.id)).runs;
    assert.equal(guidesRun?.outcome, 'running');
    assert.ok(guidesRun?.jobId);
  });

  test('past the rate limit a run is skipped rate-limited; a manual trigger gets 429', async () => {
    const { projectId } = await seedProject(t.app, { rateLimit: 1 });
    const automation = await t.app.automations.create(projectId, {
      name: 'Manual',
      trigger: { type: 'manual' },
      instruction: 'Update the docs.',
    });
    const first = await t.app.automations.trigger(projectId, automation.id, {});
    assert.ok(first.jobId);
    await assert.rejects(t.app.automations.trigger(projectId, automation.id, {}), {
      code: 'rate-limited',
    });
    const { runs } = await t.app.automations.runs(projectId, automation.id);
    assert.equal(runs.length, 2);
    assert.equal(runs[0]!.outcome, 'skipped');
    assert.equal(runs[0]!.reason, 'rate-limited');
  });

  test('a run whose job a stopped process never created gets its job once it is resumed, once', async () => {
    const { projectId } = await seedProject(t.app);
    const automation = await t.app.automations.create(projectId, {
      name: 'Docs',
      trigger: { type: 'docs-push' },
      instruction: 'Update the docs.',
    });
    // The process recorded the run and stopped before it created the job.
    const { id: runId } = await recordRun(t.app.store.db, ['commit:docs:feed'], {
      automationId: automation.id,
      projectId,
      triggerType: 'docs-push',
      changes: [],
      scheduledFor: null,
      outcome: 'running',
      reason: null,
      at: new Date(Date.now() - 120_000),
    });
    await t.app.store.db
      .updateTable('automation_runs')
      .set({ created_at: new Date(Date.now() - 120_000).toISOString() })
      .where('id', '=', runId)
      .execute();
    assert.equal(await t.app.automations.resumeRuns(), 1);
    const [run] = (await t.app.automations.runs(projectId, automation.id)).runs;
    assert.ok(run?.jobId);
    // A second process resuming the same run at once (before it saw the job) creates no second job.
    await t.app.store.db
      .updateTable('automation_runs')
      .set({ job_id: null })
      .where('id', '=', runId)
      .execute();
    await t.app.automations.resumeRuns();
    const [again] = (await t.app.automations.runs(projectId, automation.id)).runs;
    assert.equal(again?.jobId, run.jobId);
    const jobs = await t.app.store.db
      .selectFrom('jobs')
      .select('id')
      .where('project_id', '=', projectId)
      .execute();
    assert.equal(jobs.length, 1);
  });

  test('a run’s outcome follows what its job did: pull-request, branch-pushed, no-changes-needed, failed', async () => {
    const { projectId } = await seedProject(t.app);
    const automation = await t.app.automations.create(projectId, {
      name: 'Manual',
      trigger: { type: 'manual' },
      instruction: 'Update the docs.',
    });
    const outcomes: [Record<string, unknown>, string, string | null][] = [
      [{ status: 'completed', pr_link: 'https://github.com/acme/docs/pull/1' }, 'pull-request', null],
      // A local project's job that committed: a branch with a diff and no pull request (issue 35).
      [{ status: 'completed', pr_link: null, branch: 'docwright/abcd1234' }, 'branch-pushed', null],
      [{ status: 'completed', pr_link: null, branch: null }, 'no-changes-needed', null],
      [{ status: 'failed', error_code: 'model-error' }, 'failed', 'model-error'],
    ];
    for (const [job, outcome, reason] of outcomes) {
      const { jobId, runId } = await t.app.automations.trigger(projectId, automation.id, {});
      let run = (await t.app.automations.runs(projectId, automation.id)).runs.find((r) => r.id === runId)!;
      assert.equal(run.outcome, 'running');
      await t.app.store.db.updateTable('jobs').set(job).where('id', '=', jobId).execute();
      run = (await t.app.automations.runs(projectId, automation.id)).runs.find((r) => r.id === runId)!;
      assert.equal(run.outcome, outcome);
      assert.equal(run.reason, reason);
    }
  });
});

describe('polling and batches, with a listing double and an injected clock', () => {
  let t: TestApp;
  let clock = new Date('2026-04-01T10:00:00.000Z');
  let loop: AutomationLoop;
  /** What each repository (by URL) has merged, oldest first, as the host would list it. */
  const merged = new Map<string, MergedPullRequest[]>();
  /** The cursor each listing started from, by repository URL. */
  const asked = new Map<string, ChangeCursor[]>();
  const listChanges: ListChanges = async (repository, _ref, since) => {
    asked.set(repository.repository, [...(asked.get(repository.repository) ?? []), since]);
    const after = (merged.get(repository.repository) ?? []).filter(
      (m) =>
        m.mergedAt > since.mergedAt || (m.mergedAt === since.mergedAt && !since.numbers.includes(m.number)),
    );
    const last = after.at(-1);
    const cursor = last ? { mergedAt: last.mergedAt, numbers: [last.number], sha: since.sha } : since;
    return { merged: after, pushes: [], cursor, more: false, notes: [] };
  };
  before(async () => {
    t = await startTestApp({ now: () => clock, env: { DOCWRIGHT_RATE_LIMIT: '100' } });
    loop = new AutomationLoop(t.app, { pollSeconds: 0, listChanges });
  });
  after(() => t.close());

  let repositories = 0;
  /** A project with the context repository `api` (its own URL), and that URL. */
  const projectWithApi = async () => {
    const { projectId } = await seedProject(t.app);
    const url = `https://github.com/acme/api-${++repositories}`;
    merged.set(url, []);
    await t.app.contextRepositories.add(projectId, { name: 'api', repository: url, ref: 'main' });
    return { projectId, url };
  };
  const merge = (url: string, number: number, at: string): MergedPullRequest => {
    const pull: MergedPullRequest = {
      number,
      title: `Change ${number}`,
      headRef: `feature/${number}`,
      headSha: null,
      mergeCommitSha: number.toString(16).padStart(40, 'e'),
      mergedAt: new Date(at).toISOString(),
      labels: [],
      url: null,
    };
    merged.get(url)!.push(pull);
    return pull;
  };
  const codeChange = (projectId: string, name: string) =>
    t.app.automations.create(projectId, {
      name,
      trigger: { type: 'code-change', repositories: ['api'] },
      instruction: 'Update the docs for this change.',
    });
  const runsOf = async (projectId: string, id: string) => (await t.app.automations.runs(projectId, id)).runs;

  test('the poll cursor is saved, and the next poll starts from it', async () => {
    const { projectId, url } = await projectWithApi();
    clock = new Date('2026-04-01T10:00:00.000Z');
    const automation = await codeChange(projectId, 'Update docs');
    const first = merge(url, 1, '2026-04-01T11:00:00.000Z');
    clock = new Date('2026-04-01T12:00:00.000Z');
    assert.equal(await loop.poll(), 1);
    const saved = await t.app.store.db
      .selectFrom('automation_poll_cursors')
      .select('cursor')
      .where('project_id', '=', projectId)
      .where('repository', '=', 'api')
      .executeTakeFirstOrThrow();
    const cursor = { mergedAt: first.mergedAt, numbers: [1], sha: null };
    assert.deepEqual(JSON.parse(saved.cursor), cursor);
    merge(url, 2, '2026-04-01T12:30:00.000Z');
    clock = new Date('2026-04-01T13:00:00.000Z');
    assert.equal(await loop.poll(), 1, 'the change merged since');
    assert.deepEqual(asked.get(url), [
      { mergedAt: '2026-04-01T10:00:00.000Z', numbers: [], sha: null },
      cursor,
    ]);
    assert.deepEqual(
      (await runsOf(projectId, automation.id)).map((r) => r.trigger.changes),
      [[{ repository: 'api', pullRequest: 2 }], [{ repository: 'api', pullRequest: 1 }]],
    );
  });

  test('an automation created after a change merged never fires for it, even when another automation recorded the change', async () => {
    const { projectId, url } = await projectWithApi();
    clock = new Date('2026-04-02T10:00:00.000Z');
    const earlier = await codeChange(projectId, 'Earlier');
    const pull = merge(url, 10, '2026-04-02T11:00:00.000Z');
    // The merge's webhook reaches the automation that existed then (a webhook does not say when it landed).
    clock = new Date('2026-04-02T11:00:05.000Z');
    assert.equal(
      (await t.app.automations.fireForChange(mergedChangeArrival(projectId, 'api', pull, null))).length,
      1,
    );
    clock = new Date('2026-04-02T12:00:00.000Z');
    const later = await codeChange(projectId, 'Later');
    // The first poll lists the change again (from when the earlier automation was created).
    clock = new Date('2026-04-02T13:00:00.000Z');
    assert.equal(await loop.poll(), 0);
    assert.equal((await runsOf(projectId, earlier.id)).length, 1);
    assert.deepEqual(await runsOf(projectId, later.id), []);
    const jobs = await t.app.store.db
      .selectFrom('jobs')
      .select('id')
      .where('project_id', '=', projectId)
      .execute();
    assert.equal(jobs.length, 1);
  });

  test('a batch schedule’s second firing carries only the changes merged after the first', async () => {
    const { projectId, url } = await projectWithApi();
    clock = new Date('2026-04-06T08:00:00.000Z');
    const daily = await t.app.automations.create(projectId, {
      name: 'Changelog',
      trigger: { type: 'schedule', cron: '0 9 * * *', batch: true },
      instruction: 'Draft a changelog entry for these changes.',
    });
    merge(url, 21, '2026-04-06T08:30:00.000Z');
    clock = new Date('2026-04-06T09:00:30.000Z');
    assert.equal((await loop.tickSchedules(clock)).created.length, 1);
    merge(url, 22, '2026-04-06T12:00:00.000Z');
    merge(url, 23, '2026-04-07T08:00:00.000Z');
    clock = new Date('2026-04-07T09:00:30.000Z');
    assert.equal((await loop.tickSchedules(clock)).created.length, 1);
    const runs = await runsOf(projectId, daily.id);
    assert.deepEqual(
      runs.map((r) => [r.trigger.scheduledFor, r.trigger.changes]),
      [
        [
          '2026-04-07T09:00:00.000Z',
          [
            { repository: 'api', pullRequest: 22 },
            { repository: 'api', pullRequest: 23 },
          ],
        ],
        ['2026-04-06T09:00:00.000Z', [{ repository: 'api', pullRequest: 21 }]],
      ],
    );
    assert.ok(runs.every((r) => r.jobId));
  });
});

describe('two processes sharing one database', () => {
  test('receiving the same change (each its own delivery) make one run and one job', async () => {
    const database = await createTestDatabase();
    const apps: App[] = [];
    const servers: ReturnType<typeof buildServer>[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const config = loadConfig({ ...database.env, DOCWRIGHT_LOG_LEVEL: 'silent' });
        apps.push(await openApp(config, { logger: createLogger('silent'), contexts }));
      }
      const [one, two] = apps as [App, App];
      const project = await one.projects.create({
        name: 'Docs',
        repository: 'https://github.com/acme/api',
        token: 'tok-two-processes-0123456789',
        ref: 'main',
        model: 'openai/gpt-test',
      });
      const automation = await one.automations.create(project.id, {
        name: 'Update docs',
        trigger: { type: 'code-change', repositories: ['docs'] },
        instruction: 'Update the docs.',
      });
      servers.push(...apps.map((app) => buildServer(app)));
      const urls = await Promise.all(servers.map((s) => s.listen({ port: 0, host: '127.0.0.1' })));
      const body = JSON.stringify(samplePayload('github-pull-request-merged'));
      // The host's delivery reaches one process; a second delivery of the same merge (the push's
      // twin, a redelivery under a new id) reaches the other.
      const statuses = await Promise.all(
        urls.map((url, i) =>
          fetch(`${url}/hooks/${project.id}/docs`, {
            method: 'POST',
            headers: signedHeaders('github', 'pull_request', body, SECRET, `two-${i}`),
            body,
          }).then((r) => r.status),
        ),
      );
      assert.deepEqual(statuses, [202, 202]);
      const loops = apps.map((app) => new AutomationLoop(app, { pollSeconds: 0 }));
      await Promise.all(loops.map((loop) => loop.processDeliveries()));
      await Promise.all(loops.map((loop) => loop.processDeliveries()));
      const { runs } = await two.automations.runs(project.id, automation.id);
      assert.equal(runs.length, 1);
      const jobs = await one.store.db
        .selectFrom('jobs')
        .select('id')
        .where('project_id', '=', project.id)
        .execute();
      assert.deepEqual(
        jobs.map((j) => j.id),
        [runs[0]!.jobId],
      );
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      for (const app of apps) await app.close();
      await database.drop();
    }
  });
});
