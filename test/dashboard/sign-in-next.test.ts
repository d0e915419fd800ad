import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOperator, launchBrowser, PASSWORD, signedIn } from './browser.ts';

/**
 * Where sign-in sends the browser next (`next`): a path of this site, whatever the parameter
 * holds, and never an error. The vectors aim at another server on loopback, so that a browser
 * that followed one would visibly land there.
 */
describe('sign-in: next is a path of this site, whatever it holds', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let email: string;
  let cookie: string;
  let projectId: string;
  let elsewhere: Server;
  /** `host:port` of the other server. */
  let other: string;
  let vectors: string[];

  before(async () => {
    t = await startTestApp();
    email = await createOperator(t.app);
    projectId = (await seedProject(t.app)).projectId;
    base = await t.listen();
    elsewhere = createServer((_request, response) => response.end('elsewhere'));
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    other = `127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    ({ context } = await signedIn(browser, base, email));
    cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    vectors = [
      `//${other}/again`,
      `/\t/${other}/again`,
      `/\n/${other}/again`,
      `/\r/${other}/again`,
      `/\r\n/${other}/again`,
      `\t//${other}/again`,
      `/\\${other}/again`,
      `/\t\\${other}/again`,
      `\\\\${other}/again`,
      `/./\\/${other}/again`,
      `/.//${other}/again`,
      `/..//${other}/again`,
      `/projects/..//${other}/again`,
      `http://${other}/again`,
      `https:${other}/again`,
      `//${other}%2F..`,
      `javascript:alert(1)`,
      ` //${other}/again`,
      '/。',
      `/。/${other}`,
      '/\u2028',
      '/\0',
      '/\u00a0',
    ];
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await new Promise((resolve) => elsewhere?.close(resolve));
    await t?.close();
  });

  const stayed = (location: string | null, vector: string) => {
    assert.ok(location, `a Location for ${JSON.stringify(vector)}`);
    // Resolved as a browser resolves it (the WHATWG URL parser drops tabs and line breaks, reads \ as /).
    assert.equal(new URL(location, base).origin, new URL(base).origin, JSON.stringify(vector));
  };

  test('signed in, GET /login?next=… redirects within the site (never a 500)', async () => {
    for (const vector of vectors) {
      const answer = await fetch(new URL(`/login?next=${encodeURIComponent(vector)}`, base), {
        redirect: 'manual',
        headers: { cookie },
      });
      assert.equal(answer.status, 303, JSON.stringify(vector));
      stayed(answer.headers.get('location'), vector);
    }
  });

  test('in a browser, none of them lands on the other server', async () => {
    const page = await context.newPage();
    for (const vector of vectors) {
      await page.goto(`/login?next=${encodeURIComponent(vector)}`);
      assert.equal(new URL(page.url()).origin, new URL(base).origin, JSON.stringify(vector));
    }
    await page.close();
  });

  test('POST /login with the right credentials and any next signs in and stays on the site', async () => {
    for (const vector of ['/\t/', '/\n/', '/\r/', '/。', '//', '/.//'].map((v) => `${v}${other}/again`)) {
      const answer = await fetch(new URL('/login', base), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
        body: new URLSearchParams({ email, password: PASSWORD, next: vector }),
      });
      assert.equal(answer.status, 303, JSON.stringify(vector));
      stayed(answer.headers.get('location'), vector);
      const session = /docwright_session=([^;]+)/.exec(answer.headers.get('set-cookie') ?? '')?.[1];
      assert.ok(
        session && (await t.app.sessions.resolve(session)),
        `signed in with ${JSON.stringify(vector)}`,
      );
    }
  });

  test('a path of the site, with its query and fragment, is kept (percent-encoded)', async () => {
    const keep = [
      [`/projects/${projectId}/jobs?status=failed`, `/projects/${projectId}/jobs?status=failed`],
      ['/operators#add', '/operators#add'],
      ['/projects/é?q=ü', '/projects/%C3%A9?q=%C3%BC'],
      ['/a b', '/a%20b'],
    ];
    for (const [next, location] of keep) {
      const answer = await fetch(new URL(`/login?next=${encodeURIComponent(next!)}`, base), {
        redirect: 'manual',
        headers: { cookie },
      });
      assert.equal(answer.headers.get('location'), location, next);
    }
  });

  test('signed out, a form post with any Referer is sent to sign in (never a 500)', async () => {
    for (const referer of ['http://[', 'http://', '::', '/projects/new', `http://${other}/x?y=1`]) {
      const answer = await fetch(new URL('/projects/new', base), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, referer },
        body: new URLSearchParams({ name: 'x' }),
      });
      assert.equal(answer.status, 303, referer);
      const location = new URL(answer.headers.get('location')!, base);
      assert.equal(location.pathname, '/login', referer);
      assert.match(location.searchParams.get('next') ?? '', /^\/(?!\/)/, referer);
    }
  });
});
