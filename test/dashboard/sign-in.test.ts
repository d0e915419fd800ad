import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { openApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { buildServer } from '../../src/server.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOperator, launchBrowser, PASSWORD } from './browser.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A form POST from a chosen loopback address (the throttle counts per client address). */
function postForm(
  base: string,
  path: string,
  form: Record<string, string>,
  options: { localAddress?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const url = new URL(path, base);
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        localAddress: options.localAddress,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          origin: url.origin,
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('sign-in, sessions and sign-out', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let email: string;
  let projectId: string;
  /** Password checks the sign-in route asked for (each one computes a scrypt hash). */
  let verifications = 0;

  before(async () => {
    t = await startTestApp();
    email = await createOperator(t.app);
    projectId = (await seedProject(t.app)).projectId;
    const verify = t.app.operators.verify.bind(t.app.operators);
    t.app.operators.verify = (...args) => {
      verifications++;
      return verify(...args);
    };
    base = await t.listen();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  test('every page redirects (303) to /login?next=<path> when signed out', async () => {
    const pages = [
      '/',
      '/projects/new',
      `/projects/${projectId}/settings`,
      `/projects/${projectId}/keys`,
      `/projects/${projectId}/jobs`,
      `/projects/${projectId}/jobs?status=failed`,
      `/projects/${projectId}/jobs/job_01jzzzzzzzzzzzzzzzzzzzzzzz`,
      '/operators',
    ];
    for (const path of pages) {
      const response = await fetch(new URL(path, base), { redirect: 'manual' });
      assert.equal(response.status, 303, path);
      assert.equal(response.headers.get('location'), `/login?next=${encodeURIComponent(path)}`, path);
    }
    // A stale or forged cookie is no session either.
    const forged = await fetch(new URL('/operators', base), {
      redirect: 'manual',
      headers: { cookie: `docwright_session=dws_${'A'.repeat(43)}` },
    });
    assert.equal(forged.status, 303);
  });

  test('wrong password, then right password: cookie flags, a new session id at each sign-in, redirect to next', async () => {
    const context = await browser.newContext({ baseURL: base });
    try {
      const page = await context.newPage();
      const target = `/projects/${projectId}/keys`;
      await page.goto(target);
      assert.equal(new URL(page.url()).pathname, '/login');

      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('The email or password is not correct.').waitFor();
      // An unknown account gets the very same message.
      await page.getByLabel('Email').fill('nobody@example.com');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('The email or password is not correct.').waitFor();
      assert.equal((await context.cookies()).length, 0, 'no cookie for a failed sign-in');

      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([
        page.waitForURL(`**${target}`),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      await page.getByLabel('Project ID').waitFor();
      const [cookie] = await context.cookies();
      assert.equal(cookie?.name, 'docwright_session');
      assert.equal(cookie?.httpOnly, true);
      assert.equal(cookie?.sameSite, 'Lax');
      assert.equal(cookie?.path, '/');
      assert.equal(cookie?.secure, false, 'Secure only when DOCWRIGHT_PUBLIC_URL is https');
      assert.match(cookie?.value ?? '', /^dws_/);

      // Signing in again (another tab) rotates the session: the old id no longer works.
      await page.goto('/login?next=/operators');
      assert.equal(new URL(page.url()).pathname, '/operators', 'a signed-in visit to /login goes on');
      const again = await postForm(
        base,
        '/login',
        { email, password: PASSWORD, next: '/' },
        {
          headers: { cookie: `docwright_session=${cookie!.value}` },
        },
      );
      assert.equal(again.status, 303);
      const fresh = /docwright_session=([^;]+)/.exec(String(again.headers['set-cookie']))?.[1];
      assert.ok(fresh && fresh !== cookie!.value);
      assert.equal(await t.app.sessions.resolve(cookie!.value), undefined, 'the old session ended');
      assert.ok(await t.app.sessions.resolve(fresh));

      // `next` never leads off the site.
      for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
        const answer = await postForm(base, '/login', { email, password: PASSWORD, next });
        assert.equal(answer.headers.location, '/', next);
      }
    } finally {
      await context.close();
    }
  });

  test('sign-out is a POST to /logout that ends the session', async () => {
    const context = await browser.newContext({ baseURL: base });
    try {
      const page = await context.newPage();
      await page.goto('/login');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([
        page.waitForURL((u) => u.pathname === '/'),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      const [cookie] = await context.cookies();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('You are signed out.').waitFor();
      assert.equal(await t.app.sessions.resolve(cookie!.value), undefined);
      assert.equal((await context.cookies()).length, 0, 'the cookie is cleared');
      await page.goto('/operators');
      assert.equal(new URL(page.url()).pathname, '/login');
    } finally {
      await context.close();
    }
  });

  test('a session idle for 12 hours ends', async () => {
    let clock = new Date('2030-01-01T00:00:00.000Z');
    const idle = await startTestApp({ now: () => clock });
    try {
      const operator = await idle.app.operators.create({ email: 'idle@example.com', password: PASSWORD });
      const { token } = await idle.app.sessions.create(operator.id, { ttlMs: 7 * 24 * 3_600_000 });
      clock = new Date(clock.getTime() + 11 * 3_600_000);
      assert.ok(await idle.app.sessions.resolve(token), 'in use after 11 hours');
      clock = new Date(clock.getTime() + 12 * 3_600_000 - 1);
      assert.ok(await idle.app.sessions.resolve(token), 'idle for just under 12 hours');
      clock = new Date(clock.getTime() + 12 * 3_600_000);
      assert.equal(await idle.app.sessions.resolve(token), undefined, 'idle for 12 hours');
    } finally {
      await idle.close();
    }
  });

  test('throttling: after 10 failures per email or per address, a fast 429 with Retry-After and no hash', async () => {
    const victim = 'victim@example.com';
    await t.app.operators.create({ email: victim, password: PASSWORD });
    verifications = 0;
    for (let i = 0; i < 10; i++) {
      const answer = await postForm(
        base,
        '/login',
        { email: victim, password: `wrong ${i}` },
        { localAddress: '127.0.0.2' },
      );
      assert.equal(answer.status, 401, `failure ${i + 1}`);
    }
    assert.equal(verifications, 10);

    // The 11th for this email, from another address, with the right password: refused unchecked.
    const started = performance.now();
    const eleventh = await postForm(
      base,
      '/login',
      { email: victim, password: PASSWORD },
      { localAddress: '127.0.0.3' },
    );
    const ms = performance.now() - started;
    assert.equal(eleventh.status, 429);
    const retryAfter = Number(eleventh.headers['retry-after']);
    assert.ok(retryAfter > 14 * 60 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`);
    assert.match(eleventh.body, /Too many failed sign-ins/);
    assert.equal(verifications, 10, 'no password hash was computed for the throttled attempt');
    assert.equal(eleventh.headers['set-cookie'], undefined);

    // The address that failed 10 times is throttled for every email…
    const sameAddress = await postForm(
      base,
      '/login',
      { email, password: PASSWORD },
      { localAddress: '127.0.0.2' },
    );
    assert.equal(sameAddress.status, 429);
    assert.equal(verifications, 10);
    // …while another person at another address signs in as usual.
    const other = await postForm(
      base,
      '/login',
      { email, password: PASSWORD },
      { localAddress: '127.0.0.4' },
    );
    assert.equal(other.status, 303);
    assert.equal(verifications, 11);
    process.stdout.write(`# the throttled attempt took ${ms.toFixed(1)} ms\n`);
  });

  test('throttling holds across API processes on one database, and under concurrency', async () => {
    // A second process of the same deployment: its own app and HTTP server on the same database.
    const config = loadConfig({ ...t.database.env, DOCWRIGHT_LOG_LEVEL: 'silent' });
    const second = await openApp(config, { logger: createLogger('silent') });
    const secondServer = buildServer(second);
    try {
      const secondBase = await secondServer.listen({ port: 0, host: '127.0.0.1' });
      let secondVerifications = 0;
      const verify = second.operators.verify.bind(second.operators);
      second.operators.verify = (...args) => {
        secondVerifications++;
        return verify(...args);
      };
      verifications = 0;
      const target = 'spread@example.com';
      // 20 guesses at once, split between the two processes, from 20 addresses.
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          postForm(
            i % 2 ? base : secondBase,
            '/login',
            { email: target, password: `guess ${i}` },
            {
              localAddress: `127.0.1.${i + 1}`,
            },
          ),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [...Array(10).fill(401), ...Array(10).fill(429)]);
      assert.equal(verifications + secondVerifications, 10, 'exactly ten passwords were checked');
    } finally {
      await secondServer.close();
      await second.close();
    }
  });

  test('behind a trusted proxy (DOCWRIGHT_TRUST_PROXY) the throttle counts the forwarded client address', async () => {
    for (const [trust, expected] of [
      ['127.0.0.1', 401],
      [undefined, 429],
    ] as const) {
      const config = loadConfig({
        ...t.database.env,
        DOCWRIGHT_LOG_LEVEL: 'silent',
        ...(trust && { DOCWRIGHT_TRUST_PROXY: trust }),
      });
      const proxied = await openApp(config, { logger: createLogger('silent') });
      const proxiedServer = buildServer(proxied);
      try {
        const proxiedBase = await proxiedServer.listen({ port: 0, host: '127.0.0.1' });
        const via = (client: string, who: string) =>
          postForm(
            proxiedBase,
            '/login',
            { email: `${who}@example.com`, password: 'wrong password here' },
            { localAddress: trust ? '127.0.0.1' : '127.0.0.5', headers: { 'x-forwarded-for': client } },
          );
        for (let i = 0; i < 10; i++)
          assert.equal((await via('203.0.113.5', `p${i}-${expected}`)).status, 401);
        // Another client behind the same proxy: its own address when the proxy is trusted; the
        // proxy's (already throttled) one when it is not.
        assert.equal((await via('203.0.113.6', `other-${expected}`)).status, expected, `trust ${trust}`);
      } finally {
        await proxiedServer.close();
        await proxied.close();
      }
    }
  });
});
