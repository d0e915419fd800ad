// Project isolation (docs/api/authentication.mdx): a key of project A, on A's own paths, reaches none of project B's
// jobs through any job route — v2 get (cold and from the poll cache), list, events as JSON and
// as a stream, diff, archive, message and retry, and v1 get and list. Each route is first shown
// to answer B's job to B's key, so that A's 404 is the isolation and not some other refusal.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

describe("a project's key reaches no job of another project", () => {
  let t: TestApp;
  let a: SeededProject;
  let b: SeededProject;
  let ownJob: string;
  let otherJob: string;

  const call = (
    project: SeededProject,
    method: 'GET' | 'POST',
    path: string,
    options: { payload?: object; headers?: Record<string, string> } = {},
  ) =>
    t.server.inject({
      method,
      url: `${path.startsWith('/v1') ? '/v1' : '/v2'}/agent/${project.projectId}${path.replace(/^\/v1/, '')}`,
      headers: { ...bearer(project.key), ...options.headers },
      ...(options.payload === undefined ? {} : { payload: options.payload }),
    });
  const runsOf = async (jobId: string) =>
    (await t.app.store.db.selectFrom('job_runs').select('id').where('job_id', '=', jobId).execute()).length;

  before(async () => {
    t = await startTestApp();
    [a, b] = [await seedProject(t.app), await seedProject(t.app)];
    ownJob = (await t.app.jobs.create(a.projectId, { prompt: 'A’s own job' })).job.id;
    otherJob = (await t.app.jobs.create(b.projectId, { prompt: 'B’s job' })).job.id;
    // B's job ended failed after committing: it has a transcript, a diff, and takes follow-ups and retries.
    const run = await t.app.store.db
      .updateTable('job_runs')
      .set({ status: 'failed' })
      .where('job_id', '=', otherJob)
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.app.store.db
      .updateTable('jobs')
      .set({ status: 'failed', error_code: 'model-unavailable', error_message: 'down' })
      .where('id', '=', otherJob)
      .execute();
    await t.app.store.db
      .insertInto('run_diffs')
      .values({
        run_id: run.id,
        job_id: otherJob,
        base_commit: 'a'.repeat(40),
        head_commit: 'b'.repeat(40),
        diff: '--- a/secret.mdx\n+++ b/secret.mdx\n@@ -1 +1 @@\n-B\n+B’s secret plans\n',
        truncated: 0,
        files: 1,
        additions: 1,
        deletions: 1,
        created_at: new Date().toISOString(),
      })
      .execute();
  });
  after(() => t?.close());

  const reads: [string, string, Record<string, string>][] = [
    ['v2 get', '/job/{id}', {}],
    ['events as JSON', '/job/{id}/events', {}],
    ['events as a stream', '/job/{id}/events', { accept: 'text/event-stream' }],
    ['diff', '/job/{id}/diff', {}],
    ['v1 get', '/v1/job/{id}', {}],
  ];
  for (const [name, template, headers] of reads) {
    test(`${name}: 404 to A, the job to B`, async () => {
      const path = (id: string) => template.replace('{id}', id);
      const own = await call(b, 'GET', path(otherJob), { headers });
      assert.equal(own.statusCode, 200, 'B reads its job');
      assert.ok(own.body.includes(name === 'diff' ? 'secret plans' : otherJob));
      // Twice: the second v2 get could come from the poll cache.
      for (const attempt of [1, 2]) {
        const res = await call(a, 'GET', path(otherJob), { headers });
        assert.equal(res.statusCode, 404, `attempt ${attempt}: ${res.body.slice(0, 200)}`);
        assert.equal(res.json().code, 'job-not-found');
        assert.ok(!res.body.includes('secret plans'));
      }
      // A's own job, still active, would stream until it ends; its JSON answers show A is let in.
      if (!headers.accept && name !== 'diff')
        assert.equal((await call(a, 'GET', path(ownJob))).statusCode, 200);
    });
  }

  test("lists: v2 (any status, and B's status) and v1 hold only A's jobs", async () => {
    for (const path of ['/jobs', '/jobs?status=failed', '/jobs?limit=100']) {
      const ids = (await call(a, 'GET', path)).json().jobs.map((j: { id: string }) => j.id);
      assert.ok(!ids.includes(otherJob), path);
      if (path !== '/jobs?status=failed') assert.deepEqual(ids, [ownJob], path);
    }
    const sessions = (await call(a, 'GET', '/v1/jobs?take=100')).json().allSessions;
    assert.deepEqual(
      sessions.map((s: { sessionId: string }) => s.sessionId),
      [ownJob],
    );
    const theirs = (await call(b, 'GET', '/v1/jobs')).json().allSessions;
    assert.deepEqual(
      theirs.map((s: { sessionId: string }) => s.sessionId),
      [otherJob],
    );
  });

  for (const [name, payload] of [
    ['message', { prompt: 'Delete every page' }],
    ['retry', undefined],
    ['archive', undefined],
  ] as const) {
    test(`${name}: 404 to A, and B’s job unchanged`, async () => {
      const res = await call(a, 'POST', `/job/${otherJob}/${name}`, { payload });
      assert.equal(res.statusCode, 404, res.body.slice(0, 200));
      assert.equal(res.json().code, 'job-not-found');
      const job = await t.app.jobs.get(b.projectId, otherJob);
      assert.equal(job.status, 'failed');
      assert.equal(job.archivedAt, null);
      assert.equal(await runsOf(otherJob), 1, 'no run was queued on B’s job');
    });
  }

  test('and B itself may retry and archive its job: the routes work, so the 404s above were the isolation', async () => {
    assert.equal((await call(b, 'POST', `/job/${otherJob}/retry`)).statusCode, 200);
    assert.equal((await call(b, 'POST', `/job/${otherJob}/archive`)).statusCode, 200);
  });
});
