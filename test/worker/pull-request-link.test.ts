// A code host that answers a pull request link that is not http(s) (`javascript:…`): the job
// fails with pr-create-failed and the link is kept nowhere; a link stored before this check is
// not rendered as a link by the dashboard.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { createOperator, PASSWORD } from '../dashboard/browser.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { HOST_KINDS, type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { createJob, waitFor } from '../helpers/worker.ts';

const MODEL_KEY = 'sk-pull-request-link-test';
const HOSTILE = 'javascript:alert(document.cookie)';

describe('pull request links that are not http(s)', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let worker: Worker;
  const hosted: HostedRepository[] = [];

  before(async () => {
    [t, model] = await Promise.all([
      startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } }),
      startOpenAIServer({ apiKey: MODEL_KEY }),
    ]);
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker?.stop(0);
    await Promise.all([t?.close(), model?.close(), ...hosted.map((h) => h.close())]);
  });

  for (const kind of HOST_KINDS) {
    test(`${kind}: the job fails with pr-create-failed, saying so, and keeps no link`, async () => {
      const repo = await startHostedRepository(kind, { 'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n' });
      hosted.push(repo);
      const project = await t.app.projects.create({
        name: `${kind} docs`,
        repository: repo.repository,
        host: kind,
        apiUrl: repo.apiUrl,
        token: repo.token,
        ref: 'main',
        openaiCompatibleBaseUrl: model.url,
        openaiCompatibleApiKey: MODEL_KEY,
      });
      model.push(
        toolCall('read_file', { path: 'index.mdx' }),
        toolCall('edit_file', { path: 'index.mdx', old_string: 'Welcome.', new_string: 'Welcome, readers.' }),
        toolCall('finish', { title: 'Greet readers', summary: 'A warmer welcome.' }),
      );
      // The host opens it and answers with a link no one should follow.
      repo.api.answerNext(
        { method: 'POST', path: /\/(pulls|merge_requests)$/ },
        { status: 201, body: { number: 7, iid: 7, html_url: HOSTILE, web_url: HOSTILE } },
      );
      const id = await createJob(t.app, project.id, 'Greet the readers');
      const job = await waitFor(
        async () => {
          const j = await t.app.jobs.get(project.id, id);
          return j.status === 'active' ? undefined : j;
        },
        { timeoutMs: 30_000 },
      );
      assert.equal(job.status, 'failed', JSON.stringify(job));
      assert.equal(job.error?.code, 'pr-create-failed');
      assert.match(job.error?.message ?? '', /answered #7 with a link that is not http\(s\)/);
      assert.equal(job.prLink, null);
      const row = await t.app.store.db
        .selectFrom('jobs')
        .select('pr_link')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(row.pr_link, null);
      const events = await t.app.jobs.events(project.id, id, { limit: '1000' });
      assert.deepEqual(
        events.filter((e) => e.type === 'pull_request.ready'),
        [],
        'no pull request event carries the link',
      );
    });
  }

  test('the dashboard renders a stored link only when it is http(s)', async (context) => {
    const { projectId, repository } = await seedProject(t.app);
    context.after(() => rmSync(repository, { recursive: true, force: true }));
    const hostile = await createJob(t.app, projectId, 'Stored by an older version');
    const fine = await createJob(t.app, projectId, 'A real pull request');
    const link = (id: string, pr_link: string) =>
      t.app.store.db.updateTable('jobs').set({ status: 'completed', pr_link }).where('id', '=', id).execute();
    await link(hostile, HOSTILE);
    await link(fine, 'https://github.com/acme/docs/pull/9');

    const email = await createOperator(t.app, 'links@example.com');
    const base = await t.listen();
    const login = await fetch(new URL('/login', base), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams({ email, password: PASSWORD }),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = async (path: string) => {
      const response = await fetch(new URL(path, base), { headers: { cookie } });
      assert.equal(response.status, 200, path);
      return response.text();
    };
    const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    for (const path of [`/projects/${projectId}/jobs`, `/projects/${projectId}/jobs/${hostile}`]) {
      assert.deepEqual(
        hrefs(await page(path)).filter((h) => !h.startsWith('/') && !h.startsWith('#')),
        path.endsWith(hostile) ? [] : ['https://github.com/acme/docs/pull/9'],
        path,
      );
    }
    assert.ok(
      hrefs(await page(`/projects/${projectId}/jobs/${fine}`)).includes(
        'https://github.com/acme/docs/pull/9',
      ),
    );
  });
});
