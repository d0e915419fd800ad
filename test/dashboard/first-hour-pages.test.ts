// Small things a new user met in the first hour (issue 35), as the server renders them (HTML over
// real HTTP, signed in through the real form): the API keys page gives the base URL and a curl
// example; the Automations tab gives the full hook URL, as Settings does; a retried run is named
// as the transcript names it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { bareWithMissingHead } from '../helpers/bare-repository.ts';
import { createOperator, PASSWORD } from './browser.ts';

describe('first-hour pages', () => {
  let t: TestApp;
  let base: string;
  let cookie: string;
  let csrf: string;
  let projectId: string;

  /** `extra`: cookies a redirect set (the flash the next page shows). */
  const get = async (path: string, extra?: Response) => {
    const flash = extra?.headers.getSetCookie().map((c) => c.split(';')[0]) ?? [];
    const res = await fetch(new URL(path, base), { headers: { cookie: [cookie, ...flash].join('; ') } });
    assert.equal(res.status, 200, path);
    return res.text();
  };

  before(async () => {
    t = await startTestApp();
    const email = await createOperator(t.app);
    projectId = (await seedProject(t.app)).projectId;
    base = await t.listen();
    const login = await fetch(new URL('/login', base), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams({ email, password: PASSWORD }),
    });
    cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    csrf = (await t.app.sessions.resolve(cookie.split('=')[1]!))!.session.csrfSecret;
  });
  const post = (path: string, fields: Record<string, string>) =>
    fetch(new URL(path, base), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, ...fields }),
    });
  after(() => t?.close());

  test('the API keys page shows the base URL and a curl example for this project', async () => {
    const page = await get(`/projects/${projectId}/keys`);
    assert.match(page, new RegExp(`<label for="base-url">Base URL</label>[\\s\\S]*value="${base}"`));
    assert.ok(page.includes(`curl -X POST ${base}/v2/agent/${projectId}/job`), 'a curl example');
    assert.ok(page.includes('Authorization: Bearer $DOCWRIGHT_API_KEY'));
  });

  test('the Automations tab shows the full hook URL', async () => {
    const page = await get(`/projects/${projectId}/automations`);
    assert.ok(page.includes(`${base}/hooks/${projectId}/{name}`), 'the full URL, as Settings shows it');
  });

  test('a retried run is named as the transcript names it', async () => {
    const created = await t.app.jobs.create(projectId, { prompt: 'Fix the typo.' });
    const jobId = created.job.id;
    const fail = async () => {
      await t.app.store.db.updateTable('jobs').set({ status: 'failed' }).where('id', '=', jobId).execute();
      await t.app.store.db
        .updateTable('job_runs')
        .set({ status: 'failed' })
        .where('job_id', '=', jobId)
        .execute();
    };
    await fail();
    await t.app.jobs.retry(projectId, jobId, {});
    await fail();
    await t.app.jobs.message(projectId, jobId, { prompt: 'Also fix the heading.' });
    const page = await get(`/projects/${projectId}/jobs/${jobId}`);
    const labels = [...page.matchAll(/<div class="small muted">([^<·]+) ·/g)].map((m) => m[1]!.trim());
    assert.deepEqual(labels, ['Instruction', 'Retry of instruction 1', 'Follow-up 1']);
    assert.match(
      page,
      /<div class="kind">Retry of instruction 1<\/div>/,
      'the transcript uses the same words',
    );
    assert.doesNotMatch(page, />Retried</);
  });

  test('New project and Settings warn when the repository lacks the base branch (issue 35)', async () => {
    const bare = bareWithMissingHead();
    const created = await post('/projects/new', { name: 'Bare', repository: bare, docsDir: '.' });
    assert.equal(created.status, 303);
    const jobsPath = created.headers.get('location')!;
    const id = jobsPath.split('/')[2]!;
    assert.match(
      await get(jobsPath, created),
      /Warning: the ref main does not exist in .*docs\.git \(its branches are trunk\): jobs of this project will fail with ref-not-found until it does; change the Base branch in Settings\./,
    );
    const settings = async (ref: string) => {
      const saved = await post(`/projects/${id}/settings`, {
        name: 'Bare',
        repository: bare,
        ref,
        docsDir: '.',
      });
      assert.equal(saved.status, 303);
      return get(saved.headers.get('location')!, saved);
    };
    assert.match(await settings('nowhere'), /Settings saved\. Warning: the ref nowhere does not exist/);
    assert.doesNotMatch(await settings('trunk'), /Warning:/);
  });
});
