import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOperator, launchBrowser, signedIn } from './browser.ts';

describe('API keys page end to end', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let email: string;

  before(async () => {
    t = await startTestApp();
    email = await createOperator(t.app);
    base = await t.listen();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  test('the key shown once works on the API, is gone after reload; revoke → 401', async () => {
    const { projectId } = await seedProject(t.app);
    const { context, page } = await signedIn(browser, base, email);
    try {
      await page.goto(`/projects/${projectId}/keys`);
      assert.equal(await page.getByLabel('Project ID').inputValue(), projectId);
      assert.equal(await page.getByRole('button', { name: 'Copy', exact: true }).count(), 1);
      assert.equal(await page.getByLabel('New API key').count(), 0);

      await page.getByLabel('Name').fill('Docs CI');
      await page.getByLabel('Expires').selectOption('30');
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = await page.getByLabel('New API key').inputValue();
      assert.match(key, /^dwk_[0-9A-Za-z]{38}$/);
      // Its own copy button, called Copy as the project ID's is.
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      const copyKey = page.getByRole('button', { name: 'Copy key' });
      assert.equal(await copyKey.innerText(), 'Copy');
      await copyKey.click();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);
      // Listed by name and last four, with its expiry.
      const row = page.getByRole('row', { name: /Docs CI/ });
      await row.getByText(`dwk_…${key.slice(-4)}`).waitFor();
      assert.match(await row.innerText(), /in 30 days/);
      assert.doesNotMatch(
        await row.innerText(),
        new RegExp(key.slice(4, 20)),
        'the list never shows the key',
      );

      const api = (k: string) =>
        fetch(new URL(`/v2/agent/${projectId}/jobs`, base), { headers: { authorization: `Bearer ${k}` } });
      assert.equal((await api(key)).status, 200, 'the new key works on the API at once');

      await page.reload();
      await page.getByLabel('Project ID').waitFor();
      assert.equal(await page.getByLabel('New API key').count(), 0, 'shown once: gone after reload');
      assert.ok(!(await page.content()).includes(key));

      // Copy puts the project ID on the clipboard.
      await page.getByRole('button', { name: 'Copy', exact: true }).click();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), projectId);

      await page
        .getByRole('row', { name: /Docs CI/ })
        .getByRole('button', { name: 'Revoke' })
        .click();
      await page.getByText(/revoked: requests with it now get 401/).waitFor();
      assert.equal(await page.getByRole('row', { name: /Docs CI/ }).count(), 0);
      assert.equal((await api(key)).status, 401, 'revoked: immediate on the API');
    } finally {
      await context.close();
    }
  });

  test('a key of another project cannot be revoked through this project’s page', async () => {
    const mine = await seedProject(t.app);
    const theirs = await seedProject(t.app);
    const { context, page } = await signedIn(browser, base, email);
    try {
      await page.goto(`/projects/${mine.projectId}/keys`);
      const csrf = await page.locator('input[name=_csrf]').first().inputValue();
      const answer = await page.request.post(`/projects/${mine.projectId}/keys/${theirs.keyId}/revoke`, {
        form: { _csrf: csrf },
        headers: { origin: base },
        maxRedirects: 0,
      });
      assert.equal(answer.status(), 404);
      const response = await fetch(new URL(`/v2/agent/${theirs.projectId}/jobs`, base), {
        headers: { authorization: `Bearer ${theirs.key}` },
      });
      assert.equal(response.status, 200);
    } finally {
      await context.close();
    }
  });
});
