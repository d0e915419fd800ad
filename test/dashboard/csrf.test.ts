import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/app.ts';
import { seedProject, startTestApp, type TestApp, tampered } from '../helpers/app.ts';
import { createJob } from '../helpers/worker.ts';
import { createOperator, PASSWORD } from './browser.ts';

/** Everything a state-changing form could change, to compare before and after. */
async function snapshot(app: App) {
  const { db } = app.store;
  const [projects, keys, jobs, runs, operators, sessions, endpoints, deliveries, contexts] =
    await Promise.all([
      db.selectFrom('projects').selectAll().orderBy('id').execute(),
      db.selectFrom('api_keys').selectAll().orderBy('id').execute(),
      db.selectFrom('jobs').selectAll().orderBy('id').execute(),
      db.selectFrom('job_runs').select(['id', 'status']).orderBy('id').execute(),
      db.selectFrom('operators').select(['id', 'email', 'disabled_at']).orderBy('id').execute(),
      db.selectFrom('sessions').select('id').orderBy('id').execute(),
      db.selectFrom('webhook_endpoints').selectAll().orderBy('id').execute(),
      db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute(),
      db.selectFrom('context_repositories').selectAll().orderBy('project_id').orderBy('name').execute(),
    ]);
  return JSON.stringify({ projects, keys, jobs, runs, operators, sessions, endpoints, deliveries, contexts });
}

describe('CSRF: every state-changing form needs its token and a same-origin request', () => {
  let t: TestApp;
  let base: string;
  let cookie: string;
  let csrf: string;
  let forms: { name: string; path: string; fields: Record<string, string> }[];

  before(async () => {
    t = await startTestApp();
    const email = await createOperator(t.app);
    const other = await t.app.operators.create({ email: 'other@example.com', password: PASSWORD });
    const seeded = await seedProject(t.app);
    const hook = await t.app.webhooks.createEndpoint(seeded.projectId, {
      url: 'https://hooks.example.com/docwright',
      events: ['job.created'],
    });
    const off = await t.app.webhooks.createEndpoint(seeded.projectId, {
      url: 'https://ci.example.org/hooks',
    });
    await t.app.webhooks.disableEndpoint(off.id);
    await t.app.contextRepositories.add(seeded.projectId, {
      name: 'api',
      repository: 'https://github.com/a/api',
    });
    const jobId = await createJob(t.app, seeded.projectId, 'Fix the typo on the home page');
    const [delivery] = (await t.app.webhooks.listDeliveries(seeded.projectId)).deliveries;
    base = await t.listen();
    const login = await fetch(new URL('/login', base), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams({ email, password: PASSWORD }),
    });
    cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const session = await t.app.sessions.resolve(cookie.split('=')[1]!);
    csrf = session!.session.csrfSecret;
    const p = `/projects/${seeded.projectId}`;
    forms = [
      { name: 'new project', path: '/projects/new', fields: { name: 'Evil', repository: seeded.repository } },
      { name: 'settings', path: `${p}/settings`, fields: { name: 'Renamed', repository: seeded.repository } },
      { name: 'create key', path: `${p}/keys`, fields: { name: 'stolen', expiresInDays: 'none' } },
      { name: 'revoke key', path: `${p}/keys/${seeded.keyId}/revoke`, fields: {} },
      { name: 'new job', path: `${p}/jobs`, fields: { prompt: 'Delete every page' } },
      { name: 'archive', path: `${p}/jobs/${jobId}/archive`, fields: {} },
      { name: 'follow-up', path: `${p}/jobs/${jobId}/message`, fields: { prompt: 'More' } },
      { name: 'retry', path: `${p}/jobs/${jobId}/retry`, fields: {} },
      { name: 'delete project', path: `${p}/delete`, fields: { confirm: 'Docs' } },
      {
        name: 'add webhook',
        path: `${p}/webhooks`,
        fields: { url: 'https://evil.example/hook', events: 'job.completed' },
      },
      { name: 'disable webhook', path: `${p}/webhooks/${hook.id}/disable`, fields: {} },
      { name: 'enable webhook', path: `${p}/webhooks/${off.id}/enable`, fields: {} },
      { name: 'delete webhook', path: `${p}/webhooks/${hook.id}/delete`, fields: {} },
      {
        name: 'add context repository',
        path: `${p}/context-repositories`,
        fields: { name: 'evil', repository: 'https://github.com/evil/code' },
      },
      { name: 'remove context repository', path: `${p}/context-repositories/api/remove`, fields: {} },
      { name: 'docs webhook secret', path: `${p}/docs-webhook-secret`, fields: {} },
      { name: 're-send delivery', path: `${p}/webhooks/deliveries/${delivery!.id}/resend`, fields: {} },
      {
        name: 'add operator',
        path: '/operators',
        fields: { email: 'mallory@example.com', password: PASSWORD },
      },
      { name: 'disable operator', path: `/operators/${other.id}/disable`, fields: {} },
      { name: 'sign out', path: '/logout', fields: {} },
    ];
  });
  after(async () => {
    await t.close();
  });

  const post = (path: string, fields: Record<string, string>, headers: Record<string, string>) =>
    fetch(new URL(path, base), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers },
      body: new URLSearchParams(fields),
    });

  test('without its token: 403 and nothing changes', async () => {
    for (const form of forms) {
      const before = await snapshot(t.app);
      const answer = await post(form.path, form.fields, { origin: base });
      assert.equal(answer.status, 403, form.name);
      assert.match(await answer.text(), /reload the page/i, form.name);
      const wrong = await post(form.path, { ...form.fields, _csrf: tampered(csrf) }, { origin: base });
      assert.equal(wrong.status, 403, `${form.name} with a wrong token`);
      assert.equal(await snapshot(t.app), before, form.name);
    }
  });

  test('with a foreign Origin (or a cross-site Sec-Fetch-Site), even with the token: 403 and nothing changes', async () => {
    // The same host over another scheme is another origin too (no DOCWRIGHT_PUBLIC_URL here).
    const origins = ['https://evil.example', base.replace(/^http:/, 'https:'), 'null'];
    for (const form of forms) {
      const before = await snapshot(t.app);
      for (const origin of origins) {
        const foreign = await post(form.path, { ...form.fields, _csrf: csrf }, { origin });
        assert.equal(foreign.status, 403, `${form.name} from ${origin}`);
      }
      const crossSite = await post(
        form.path,
        { ...form.fields, _csrf: csrf },
        { 'sec-fetch-site': 'cross-site' },
      );
      assert.equal(crossSite.status, 403, `${form.name} cross-site`);
      assert.equal(await snapshot(t.app), before, form.name);
    }
    // Sign-in itself is refused from another site (login CSRF).
    const login = await fetch(new URL('/login', base), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ email: 'ada@example.com', password: PASSWORD }),
    });
    assert.equal(login.status, 403);
  });

  test('the same form with its token from the same origin goes through (the X-CSRF-Token header too)', async () => {
    const rename = forms.find((f) => f.name === 'settings')!;
    const answer = await post(rename.path, { ...rename.fields, _csrf: csrf }, { origin: base });
    assert.equal(answer.status, 303);
    const key = forms.find((f) => f.name === 'create key')!;
    const viaHeader = await post(key.path, key.fields, { origin: base, 'x-csrf-token': csrf });
    assert.equal(viaHeader.status, 303);
    const names = (await t.app.store.db.selectFrom('projects').select('name').execute()).map((r) => r.name);
    assert.ok(names.includes('Renamed'));
  });
});

describe('behind a proxy: DOCWRIGHT_PUBLIC_URL', () => {
  test('the public origin is the one accepted, and an https one makes the cookie Secure', async () => {
    const t = await startTestApp({ env: { DOCWRIGHT_PUBLIC_URL: 'https://docs.example.com/' } });
    try {
      const email = await createOperator(t.app);
      const base = await t.listen();
      const signIn = (origin: string) =>
        fetch(new URL('/login', base), {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
          body: new URLSearchParams({ email, password: PASSWORD }),
        });
      assert.equal((await signIn(base)).status, 403, 'the local address is not the public origin');
      const answer = await signIn('https://docs.example.com');
      assert.equal(answer.status, 303);
      assert.match(answer.headers.get('set-cookie') ?? '', /; Secure/);
    } finally {
      await t.close();
    }
  });

  test('without one, a trusted proxy’s X-Forwarded-Proto gives the scheme', async () => {
    const t = await startTestApp({ env: { DOCWRIGHT_TRUST_PROXY: '127.0.0.1' } });
    try {
      const email = await createOperator(t.app);
      const base = await t.listen();
      const https = base.replace(/^http:/, 'https:');
      const signIn = (origin: string, proto: string) =>
        fetch(new URL('/login', base), {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            origin,
            'x-forwarded-proto': proto,
          },
          body: new URLSearchParams({ email, password: PASSWORD }),
        });
      assert.equal((await signIn(https, 'http')).status, 403);
      assert.equal((await signIn(base, 'https')).status, 403);
      assert.equal((await signIn(https, 'https')).status, 303);
    } finally {
      await t.close();
    }
  });
});
