// A project's ref that its repository lacks (issue 35): a bare repository whose HEAD names a branch
// nobody pushed gave that name as the default branch, `project create` stored it without a word,
// the first job failed ref-not-found, and after `project update --ref` a `job retry` still ran on
// the old ref. Real CLI processes, real git, the API on loopback (both databases).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { bareWithMissingHead } from '../helpers/bare-repository.ts';
import { runCli } from '../helpers/process.ts';

describe('a ref the repository lacks', () => {
  let t: TestApp;
  let url: string;
  const cli = (...args: string[]) => runCli(args, t.database.env);

  before(async () => {
    t = await startTestApp();
    url = await t.listen();
  });
  after(() => t?.close());

  test('create and update warn; a retry takes the project’s ref now, and says so', async () => {
    const bare = bareWithMissingHead();
    const created = await cli('project', 'create', '--name', 'Docs', '--repository', bare, '--json');
    assert.equal(created.code, 0, created.stderr);
    const project = JSON.parse(created.stdout) as { id: string; ref: string };
    assert.equal(project.ref, 'main', "the HEAD's name, as before");
    assert.match(
      created.stderr,
      new RegExp(
        `docwright: warning: the ref main does not exist in .*docs\\.git \\(its branches are trunk\\): jobs of this project will fail with ref-not-found until it does; choose another with docwright project update ${project.id} --ref <branch>\\n`,
      ),
    );

    // A job created on the old ref, failed as the worker fails it.
    const job = (await t.app.jobs.create(project.id, { prompt: 'Fix the typo.' })).job;
    assert.equal(job.source.ref, 'main');
    await t.app.store.db
      .updateTable('jobs')
      .set({ status: 'failed', error_code: 'ref-not-found', error_message: 'the ref "main" does not exist' })
      .where('id', '=', job.id)
      .execute();
    await t.app.store.db
      .updateTable('job_runs')
      .set({ status: 'failed' })
      .where('job_id', '=', job.id)
      .execute();

    const wrong = await cli('project', 'update', project.id, '--ref', 'nowhere', '--json');
    assert.equal(wrong.code, 0, wrong.stderr);
    assert.match(wrong.stderr, /warning: the ref nowhere does not exist .*its branches are trunk/);
    const mended = await cli('project', 'update', project.id, '--ref', 'trunk', '--json');
    assert.equal(mended.code, 0, mended.stderr);
    assert.equal(mended.stderr, '', 'trunk exists: nothing to warn about');

    const key = (await t.app.keys.create(project.id)).key;
    const retried = await runCli(['job', 'retry', job.id, '--json'], {
      DOCWRIGHT_URL: url,
      DOCWRIGHT_API_KEY: key,
      DOCWRIGHT_PROJECT: project.id,
    });
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal((JSON.parse(retried.stdout) as { source: { ref: string } }).source.ref, 'trunk');
    assert.match(
      retried.stderr,
      /docwright: note: the retry runs on trunk, the project's ref now \(the job was created on main\)/,
    );
    const events = await t.app.store.db
      .selectFrom('job_events')
      .select(['type', 'data'])
      .where('job_id', '=', job.id)
      .where('type', '=', 'job.retried')
      .execute();
    assert.equal(events.length, 1);
    const data = typeof events[0]!.data === 'string' ? JSON.parse(events[0]!.data) : events[0]!.data;
    assert.deepEqual({ ref: data.ref, previousRef: data.previousRef }, { ref: 'trunk', previousRef: 'main' });
  });

  test('a job that pushed a branch keeps its base when retried', async () => {
    const bare = bareWithMissingHead();
    const project = await t.app.projects.create({ name: 'Docs', repository: bare, ref: 'trunk' });
    const job = (await t.app.jobs.create(project.id, { prompt: 'Fix the typo.' })).job;
    await t.app.store.db
      .updateTable('jobs')
      .set({ status: 'failed', branch: 'docwright/abcd1234', error_code: 'push-failed' })
      .where('id', '=', job.id)
      .execute();
    await t.app.store.db
      .updateTable('job_runs')
      .set({ status: 'failed' })
      .where('job_id', '=', job.id)
      .execute();
    await t.app.projects.update(project.id, { ref: 'main' });
    const retried = (await t.app.jobs.retry(project.id, job.id, {})).job;
    assert.equal(retried.source.ref, 'trunk', 'its branch was built on trunk');
  });
});
