// Deleting a project on the dashboard, in a real browser: from the settings page to a page that
// says what goes and asks for the project's name; a wrong name deletes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { bearer, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOperator, launchBrowser, seriousViolations, signedIn } from './browser.ts';

describe('deleting a project on the dashboard', () => {
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
    await t?.close();
  });

  test('Settings → Delete this project…: the consequences, the name asked for, then the overview says it is gone', async () => {
    const p = await seedProject(t.app);
    await t.app.jobs.create(p.projectId, { prompt: 'Still waiting for a worker' });
    await t.app.webhooks.createEndpoint(p.projectId, { url: 'https://hooks.example.com/a' });
    const { context, page } = await signedIn(browser, base, email);
    try {
      await page.goto(`/projects/${p.projectId}/settings`);
      await page.getByRole('link', { name: 'Delete this project…' }).click();
      await page.getByRole('heading', { name: 'Delete Docs?' }).waitFor();
      const consequences = await page.getByRole('region', { name: 'This cannot be undone' }).innerText();
      assert.match(
        consequences,
        /Jobs, with their transcripts and diffs: 1 \(1 running or waiting, cancelled\)/,
      );
      assert.match(consequences, /API keys, which stop working at once: 1/);
      assert.match(consequences, /Webhook endpoints, with their deliveries: 1/);
      assert.deepEqual(await seriousViolations(page), []);

      await page.getByLabel('Type the project name to confirm').fill('docs');
      await page.getByRole('button', { name: 'Delete project' }).click();
      await page.getByRole('alert').getByText('The name did not match, so nothing was deleted.').waitFor();
      assert.equal(
        await page.getByLabel('Type the project name to confirm').getAttribute('aria-invalid'),
        'true',
      );
      assert.equal(
        (await t.app.projects.list()).some((x) => x.id === p.projectId),
        true,
      );

      await page.getByLabel('Type the project name to confirm').fill('Docs');
      await page.getByRole('button', { name: 'Delete project' }).click();
      await page
        .getByText(
          'Project Docs deleted with 1 job, 1 running job cancelled, 1 API key and 1 webhook endpoint.',
        )
        .waitFor();
      assert.equal(new URL(page.url()).pathname, '/');
      assert.equal(
        (await t.app.projects.list()).some((x) => x.id === p.projectId),
        false,
      );
      const api = await fetch(new URL(`/v2/agent/${p.projectId}/jobs`, base), { headers: bearer(p.key) });
      assert.equal(api.status, 401, 'its key stopped working');
      const gone = await page.goto(`/projects/${p.projectId}/settings`);
      assert.equal(gone?.status(), 404);
    } finally {
      await context.close();
    }
  });
});
