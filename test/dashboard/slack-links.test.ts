// The settings page's "Slack" section (docs/slack.mdx) in real Chromium: a channel linked through
// its labelled form, a refusal shown on the form with what was typed, the list, and unlink; no
// serious accessibility violation, nothing wider than a phone's screen.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOperator, launchBrowser, seriousViolations, signedIn, tooWide } from './browser.ts';

describe('settings page: Slack channels', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let projectId: string;
  let email: string;

  const section = () => page.getByRole('region', { name: 'Slack' });
  const form = () => section().getByRole('form', { name: 'Link a channel' });
  const settingsLoaded = () => page.waitForEvent('load');

  before(async () => {
    [t, browser] = await Promise.all([
      startTestApp({ env: { DOCWRIGHT_SLACK_SIGNING_SECRET: 'slack-signing-secret-dashboard-0123' } }),
      launchBrowser(),
    ]);
    ({ projectId } = await seedProject(t.app));
    email = await createOperator(t.app);
    const base = await t.listen();
    ({ context, page } = await signedIn(browser, base, email));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  test('link a channel, see it listed, a refusal on the form, unlink', async () => {
    await page.goto(`/projects/${projectId}/settings`);
    await section().getByText('No Slack channel is linked to this project yet.').waitFor();
    assert.match(await section().innerText(), new RegExp(`/docwright link ${projectId}`));

    await form().getByLabel('Slack channel ID').fill('#docs');
    await Promise.all([settingsLoaded(), form().getByRole('button', { name: 'Link channel' }).click()]);
    const field = form().getByLabel('Slack channel ID');
    assert.equal(await field.inputValue(), '#docs', 'what was typed is kept');
    assert.equal(await field.getAttribute('aria-invalid'), 'true');
    assert.match(await page.getByRole('alert').innerText(), /must be a Slack channel ID/);
    assert.deepEqual(await t.app.slack.links.list(projectId), []);

    await field.fill('C0DOCS');
    await Promise.all([settingsLoaded(), form().getByRole('button', { name: 'Link channel' }).click()]);
    await page.getByText('Slack channel C0DOCS linked').waitFor();
    const row = section().getByRole('row', { name: /C0DOCS/ });
    assert.match(await row.innerText(), new RegExp(`C0DOCS[\\s\\S]*dashboard:${email.replace('.', '\\.')}`));
    assert.deepEqual(
      (await t.app.slack.links.list(projectId)).map((l) => l.channelId),
      ['C0DOCS'],
    );
    assert.deepEqual(await seriousViolations(page), []);
    await page.setViewportSize({ width: 375, height: 800 });
    assert.deepEqual(await tooWide(page), []);
    await page.setViewportSize({ width: 1280, height: 800 });

    await Promise.all([
      settingsLoaded(),
      section().getByRole('button', { name: 'Unlink channel C0DOCS' }).click(),
    ]);
    await page.getByText('Slack channel C0DOCS unlinked').waitFor();
    await section().getByText('No Slack channel is linked to this project yet.').waitFor();
    assert.deepEqual(await t.app.slack.links.list(projectId), []);
  });
});
