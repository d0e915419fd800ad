// The settings page's "Context repositories" section (docs/code-context.mdx) in real Chromium: added through
// its form with the webhook URL and secret shown once, refusals shown on the form with what was
// typed, removed; and the project option commentOnSource saved from its checkbox.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOperator, launchBrowser, seriousViolations, signedIn, tooWide } from './browser.ts';

/** Set to a directory to keep screenshots of the section (wide and 375 px). */
const SCREENSHOTS = process.env.DOCWRIGHT_SCREENSHOTS;
const TOKEN = 'ghp_dashboard_context_token_42';

describe('settings page: context repositories and commentOnSource', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let email: string;
  let projectId: string;

  const settings = () => `/projects/${projectId}/settings`;
  const section = () => page.getByRole('region', { name: 'Context repositories' });
  const addForm = () => section().getByRole('form', { name: 'Add a context repository' });
  /**
   * Resolves once the settings page has loaded again after a form posted from it was redirected
   * back: its address does not change, so waiting for the URL would return before the post.
   */
  const settingsLoaded = () => page.waitForEvent('load');

  before(async () => {
    [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
    ({ projectId } = await seedProject(t.app));
    email = await createOperator(t.app);
    base = await t.listen();
    ({ context, page } = await signedIn(browser, base, email));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  test('add shows the webhook URL and secret once; the list shows no secret; remove', async () => {
    await page.goto(settings());
    await section().getByText('No context repositories yet').waitFor();
    assert.equal(await page.getByLabel('Webhook secret', { exact: true }).count(), 0);

    const form = addForm();
    await form.getByLabel('Name').fill('api');
    await form.getByLabel('Repository URL').fill('https://github.com/acme/api');
    await form.getByLabel('Branch').fill('main');
    await form.getByLabel('Access token').fill(TOKEN);
    await Promise.all([
      settingsLoaded(),
      form.getByRole('button', { name: 'Add context repository' }).click(),
    ]);
    const secret = await t.app.contextRepositories.webhookSecretFor(projectId, 'api');
    assert.ok(secret);
    assert.equal(
      await page.getByLabel('Webhook URL', { exact: true }).inputValue(),
      `${base}/hooks/${projectId}/api`,
    );
    assert.equal(await page.getByLabel('Webhook secret', { exact: true }).inputValue(), secret);
    const row = section().getByRole('row', { name: /api/ });
    assert.match(await row.innerText(), /https:\/\/github\.com\/acme\/api[\s\S]*github[\s\S]*main[\s\S]*Set/);
    assert.ok(!(await page.content()).includes(TOKEN), 'the token is never shown');
    const [access] = await t.app.contextRepositories.accessFor(projectId);
    assert.equal(access?.secrets.token, TOKEN);

    if (SCREENSHOTS) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await section().screenshot({ path: path.join(SCREENSHOTS, 'context-repositories.png') });
    }
    assert.deepEqual(await seriousViolations(page), []);

    // Shown once: a reload no longer has the secret.
    await page.reload();
    assert.equal(await page.getByLabel('Webhook secret', { exact: true }).count(), 0);
    assert.ok(!(await page.content()).includes(secret));

    await Promise.all([settingsLoaded(), section().getByRole('button', { name: 'Remove api' }).click()]);
    await page.getByText('Context repository api removed').waitFor();
    await section().getByText('No context repositories yet').waitFor();
    assert.deepEqual(await t.app.contextRepositories.list(projectId), []);
  });

  test('the docs repository’s webhook: Create webhook secret shows the URL and secret once; then Replace', async () => {
    await page.goto(settings());
    const hook = section().getByRole('form', { name: 'Docs repository webhook' });
    assert.match(
      await section().innerText(),
      new RegExp(`${base}/hooks/${projectId}/docs[\\s\\S]*No secret yet`),
    );
    await Promise.all([
      settingsLoaded(),
      hook.getByRole('button', { name: 'Create webhook secret' }).click(),
    ]);
    await page.getByRole('heading', { name: 'New webhook secret for the docs repository' }).waitFor();
    const secret = await t.app.contextRepositories.webhookSecretFor(projectId, 'docs');
    assert.ok(secret);
    assert.equal(
      await page.getByLabel('Webhook URL', { exact: true }).inputValue(),
      `${base}/hooks/${projectId}/docs`,
    );
    assert.equal(await page.getByLabel('Webhook secret', { exact: true }).inputValue(), secret);
    assert.deepEqual(await seriousViolations(page), []);

    await page.reload();
    assert.ok(!(await page.content()).includes(secret), 'shown once');
    assert.match(await section().innerText(), /A secret is set\./);
    await Promise.all([
      settingsLoaded(),
      hook.getByRole('button', { name: 'Replace webhook secret' }).click(),
    ]);
    const replaced = await t.app.contextRepositories.webhookSecretFor(projectId, 'docs');
    assert.notEqual(replaced, secret);
    assert.equal(await page.getByLabel('Webhook secret', { exact: true }).inputValue(), replaced);
  });

  test('a repository on a cloud metadata address is refused on the form, on its field', async () => {
    await page.goto(settings());
    const form = addForm();
    await form.getByLabel('Name').fill('meta');
    await form.getByLabel('Repository URL').fill('http://169.254.169.254/acme/api');
    await form.getByLabel('Code host').selectOption('gitea');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/context-repositories')),
      form.getByRole('button', { name: 'Add context repository' }).click(),
    ]);
    assert.equal(answer.status(), 400);
    assert.match(
      await section().getByRole('alert').innerText(),
      /Repository URL: 169\.254\.169\.254 is a link-local or cloud metadata address/,
    );
    assert.equal(await addForm().getByLabel('Repository URL').getAttribute('aria-invalid'), 'true');
    assert.equal(
      (await t.app.contextRepositories.list(projectId)).filter((r) => r.name === 'meta').length,
      0,
    );
  });

  test('a refused add shows the settings page again with the error on the field and what was typed', async () => {
    await page.goto(settings());
    const form = addForm();
    await form.getByLabel('Name').fill('docs');
    await form.getByLabel('Repository URL').fill('https://gitlab.com/acme/code');
    await form.getByLabel('Access token').fill(TOKEN);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/context-repositories')),
      form.getByRole('button', { name: 'Add context repository' }).click(),
    ]);
    assert.equal(answer.status(), 400);
    const refused = addForm();
    assert.match(
      await section().getByRole('alert').innerText(),
      /Name: docs is reserved for the project’s own repository/,
    );
    assert.equal(await refused.getByLabel('Name').getAttribute('aria-invalid'), 'true');
    assert.equal(await refused.getByLabel('Repository URL').inputValue(), 'https://gitlab.com/acme/code');
    assert.equal(await refused.getByLabel('Access token').inputValue(), '', 'a secret is not sent back');
    assert.ok(!(await page.content()).includes(TOKEN));

    await t.app.contextRepositories.add(projectId, {
      name: 'sdk',
      repository: 'https://github.com/acme/sdk',
    });
    await page.goto(settings());
    await addForm().getByLabel('Name').fill('sdk');
    await addForm().getByLabel('Repository URL').fill('https://github.com/acme/sdk2');
    const [taken] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/context-repositories')),
      addForm().getByRole('button', { name: 'Add context repository' }).click(),
    ]);
    assert.equal(taken.status(), 409);
    assert.match(await section().getByRole('alert').innerText(), /Name: is taken in this project/);
    assert.equal((await t.app.contextRepositories.list(projectId)).length, 1);
  });

  test('commentOnSource: the checkbox saves the option, off by default', async () => {
    await page.goto(settings());
    const box = page.getByRole('checkbox', { name: 'Comment on source pull requests' });
    assert.equal(await box.isChecked(), false);
    await box.check();
    await Promise.all([settingsLoaded(), page.getByRole('button', { name: 'Save settings' }).click()]);
    assert.equal((await t.app.projects.get(projectId)).settings.commentOnSource, true);
    await page.reload();
    assert.equal(
      await page.getByRole('checkbox', { name: 'Comment on source pull requests' }).isChecked(),
      true,
    );
    await page.getByRole('checkbox', { name: 'Comment on source pull requests' }).uncheck();
    await Promise.all([settingsLoaded(), page.getByRole('button', { name: 'Save settings' }).click()]);
    assert.equal((await t.app.projects.get(projectId)).settings.commentOnSource, false);
  });

  test('at 375 px the section fits and has no serious violations', async () => {
    const narrow = await signedIn(browser, base, email, { width: 375 });
    try {
      await t.app.contextRepositories.add(projectId, {
        name: 'a-long-repository-name_for-the-narrow-screen',
        repository: 'https://git.example-enterprise.internal/platform-team/a-very-long-repository-name',
        host: 'gitlab',
        apiUrl: 'https://git.example-enterprise.internal/api/v4',
      });
      await narrow.page.goto(settings());
      assert.deepEqual(await seriousViolations(narrow.page), []);
      assert.deepEqual(await tooWide(narrow.page), []);
      if (SCREENSHOTS) {
        await narrow.page
          .getByRole('region', { name: 'Context repositories' })
          .screenshot({ path: path.join(SCREENSHOTS, 'context-repositories-375.png') });
      }
    } finally {
      await narrow.context.close();
    }
  });
});
