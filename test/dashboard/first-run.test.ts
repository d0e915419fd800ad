import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase, testDialect } from '../helpers/database.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';
import { launchBrowser, PASSWORD } from './browser.ts';

describe('first run of the embedded default: a one-time link on the console leads to a usable dashboard', {
  skip: testDialect === 'postgres' ? 'the one-time link is for the embedded default (SQLite) only' : false,
}, () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    database = await createTestDatabase();
    // Both are started at once; when one fails, the other is still stopped by after().
    const [started, launched] = await Promise.allSettled([startServerProcess(database.env), launchBrowser()]);
    if (started.status === 'fulfilled') server = started.value;
    if (launched.status === 'fulfilled') browser = launched.value;
    for (const s of [started, launched]) if (s.status === 'rejected') throw s.reason;
  });
  after(async () => {
    await server?.stop();
    await browser?.close();
    await database?.drop();
  });

  test('the link, printed once and never logged, creates the first account and signs in; then it is spent', async () => {
    const link = await waitFor(
      () => /(http:\/\/\S+\/setup\?token=[A-Za-z0-9_-]+)/.exec(server.output())?.[1],
      {
        message: () => `no setup link in:\n${server.output()}`,
      },
    );
    const token = new URL(link).searchParams.get('token')!;
    assert.equal(server.output().split(token).length - 1, 1, 'printed once');

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([
      page.waitForURL('**/projects/new'),
      page.getByRole('button', { name: 'Create account and sign in' }).click(),
    ]);
    await page.getByRole('heading', { name: 'New project' }).waitFor();

    // The operators page, right after: signed in just now, not "never"; at 375 px "(you)" stays
    // whole and the state badge keeps its size (issue 35).
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(new URL('/operators', link).href);
    const row = page.getByRole('row', { name: /owner@example\.com/ });
    assert.equal((await row.locator('td[data-label="Last sign-in"]').innerText()).trim(), 'just now');
    const you = row.getByText('(you)');
    assert.ok(((await you.boundingBox())?.height ?? 99) < 32, '"(you)" on one line');
    const badge = await row.getByText('active', { exact: true }).boundingBox();
    const cell = await row.locator('td[data-label="State"]').boundingBox();
    assert.ok(
      badge && cell && badge.width < cell.width / 2,
      `the badge is not stretched (${badge?.width} of ${cell?.width} px)`,
    );
    if (process.env.DOCWRIGHT_SCREENSHOTS)
      await page.screenshot({
        path: `${process.env.DOCWRIGHT_SCREENSHOTS}/operators-375.png`,
        fullPage: true,
      });

    // Spent: the same link answers that it no longer works, and says what to do.
    const again = await fetch(link);
    assert.equal(again.status, 404);
    assert.match(await again.text(), /no longer valid/);
    // The request log saw the link's URL, but never the token.
    await waitFor(() => server.output().includes('/setup?token='), { message: 'the request was logged' });
    assert.equal(server.output().split(token).length - 1, 1, 'the token is only in the console line');
    await context.close();
  });
});

describe('the one-time setup link under concurrency', () => {
  test('20 simultaneous account creations with one link: exactly one account, the others are told the link is spent', async () => {
    const t = await startTestApp();
    try {
      const token = (await t.app.firstRunLinks.create())!;
      const base = await t.listen();
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const response = await fetch(new URL('/setup', base), {
            method: 'POST',
            redirect: 'manual',
            headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
            body: new URLSearchParams({ token, email: `racer${i}@example.com`, password: PASSWORD }),
          });
          return { status: response.status, body: await response.text() };
        }),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [303, ...Array(19).fill(404)], JSON.stringify(statuses));
      for (const lost of answers.filter((a) => a.status === 404)) assert.match(lost.body, /no longer valid/);
      assert.equal((await t.app.operators.list()).length, 1);
    } finally {
      await t.close();
    }
  });

  test('a form error or a failure does not spend the link: the corrected form still creates the account', async () => {
    const t = await startTestApp();
    try {
      const token = (await t.app.firstRunLinks.create())!;
      const base = await t.listen();
      const submit = (password: string) =>
        fetch(new URL('/setup', base), {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
          body: new URLSearchParams({ token, email: 'owner@example.com', password }),
        });
      const tooShort = await submit('short');
      assert.equal(tooShort.status, 400);
      assert.match(await tooShort.text(), /at least/);
      // A failure after the link was claimed (here: the account's insert) gives it back.
      const createFirst = t.app.operators.createFirst;
      t.app.operators.createFirst = async () => {
        throw new Error('the database went away');
      };
      assert.equal((await submit(PASSWORD)).status, 500);
      t.app.operators.createFirst = createFirst;
      assert.equal((await submit(PASSWORD)).status, 303);
      assert.equal((await submit(PASSWORD)).status, 404, 'then it is spent');
      assert.equal((await t.app.operators.list()).length, 1);
    } finally {
      await t.close();
    }
  });
});
