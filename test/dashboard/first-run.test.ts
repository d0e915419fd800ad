import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
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
    [server, browser] = await Promise.all([startServerProcess(database.env), launchBrowser()]);
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
