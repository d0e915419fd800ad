// The Automations pages (docs/automations.mdx on the dashboard) in real Chromium on both databases: a preset
// fills the `New automation` form, creating it lands on its page; the list shows the last outcome
// with its reason; `Run now` starts a run with a job link; disable and enable; a bad cron is shown
// on the form; axe finds no serious violation.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { recordRun } from '../../src/automations/run-store.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOperator, launchBrowser, seriousViolations, signedIn } from './browser.ts';

/** Set DOCWRIGHT_SCREENSHOTS=docs/screenshots to refresh the README's picture from this test. */
const SCREENSHOTS = process.env.DOCWRIGHT_SCREENSHOTS;

describe('automations pages', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let projectId: string;

  before(async () => {
    [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
    projectId = (await seedProject(t.app, { name: 'Acme docs' })).projectId;
    const base = await t.listen();
    ({ context, page } = await signedIn(browser, base, await createOperator(t.app)));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  test('a preset fills the form; the automation is created, run now, disabled and enabled', async () => {
    await page.goto(`/projects/${projectId}/automations`);
    await page.getByRole('link', { name: 'Draft a changelog entry' }).click();
    assert.equal(await page.getByLabel('Name').inputValue(), 'Draft a changelog entry');
    assert.equal(await page.getByLabel('Cron (schedule)').inputValue(), '0 9 * * 1');
    assert.equal(await page.getByLabel('Trigger').inputValue(), 'schedule');
    assert.ok(await page.getByRole('checkbox', { name: /Batch/ }).isChecked());
    await Promise.all([
      page.waitForURL(/\/automations\/aut_/),
      page.getByRole('button', { name: 'Create automation' }).click(),
    ]);
    const id = page.url().split('/').pop()!;
    const created = await t.app.automations.get(projectId, id);
    assert.deepEqual(created.trigger, { type: 'schedule', cron: '0 9 * * 1', timeZone: 'UTC', batch: true });
    assert.equal(created.draft, true);

    await page.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL(new RegExp(`/automations/${id}$`));
    const row = page.getByRole('row', { name: /manual/ });
    await row.getByRole('link', { name: /^job_/ }).waitFor();
    assert.match(await row.innerText(), /running/);
    const jobHref = await row.getByRole('link', { name: /^job_/ }).getAttribute('href');
    assert.match(jobHref!, new RegExp(`^/projects/${projectId}/jobs/job_`));

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    assert.equal((await t.app.automations.get(projectId, id)).enabled, false);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    assert.equal((await t.app.automations.get(projectId, id)).enabled, true);
  });

  test('the list shows each automation’s last outcome and reason; a skipped run says why', async () => {
    const style = await t.app.automations.create(projectId, {
      name: 'Enforce the style guide',
      trigger: { type: 'docs-push' },
      instruction: 'Fix the style.',
    });
    await recordRun(t.app.store.db, ['commit:docs:abc'], {
      automationId: style.id,
      projectId,
      triggerType: 'docs-push',
      changes: [{ repository: 'docs', commit: 'abcdef0123456789abcdef0123456789abcdef01' }],
      scheduledFor: null,
      outcome: 'skipped',
      reason: 'own-change',
      at: new Date(),
    });
    await page.goto(`/projects/${projectId}/automations`);
    const row = page.getByRole('row', { name: /Enforce the style guide/ });
    assert.match(await row.innerText(), /skipped[\s\S]*own-change/);
    assert.deepEqual(await seriousViolations(page), []);
    if (SCREENSHOTS)
      await page.screenshot({ path: path.join(SCREENSHOTS, 'automations.png'), fullPage: true });
    await row.getByRole('link', { name: 'Enforce the style guide' }).click();
    const run = page.getByRole('row', { name: /docs-push/ });
    assert.match(await run.innerText(), /skipped[\s\S]*own-change[\s\S]*none/);
    assert.deepEqual(await seriousViolations(page), []);
  });

  test('a bad cron expression is shown on the form, the values kept', async () => {
    await page.goto(`/projects/${projectId}/automations`);
    await page.getByLabel('Name').fill('Nightly');
    await page.getByLabel('Trigger').selectOption('schedule');
    await page.getByLabel('Cron (schedule)').fill('0 25 * * *');
    await page.getByLabel('Instruction').fill('Check links.');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /Cron/);
    assert.equal(await page.getByLabel('Cron (schedule)').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Name').inputValue(), 'Nightly');
    assert.deepEqual(await seriousViolations(page), []);
  });

  test('an automation’s page: its breadcrumb, each run’s reason once, its runs card, the deliveries it watches with their results (issue 35)', async () => {
    const style = await t.app.automations.create(projectId, {
      name: 'Style on push',
      trigger: { type: 'docs-push' },
      instruction: 'Fix the style.',
    });
    await recordRun(t.app.store.db, ['commit:docs:def'], {
      automationId: style.id,
      projectId,
      triggerType: 'docs-push',
      changes: [{ repository: 'docs', commit: 'def0123456789abcdef0123456789abcdef01234' }],
      scheduledFor: null,
      outcome: 'skipped',
      reason: 'own-change',
      at: new Date(),
    });
    await t.app.automations.trigger(projectId, style.id, {});
    const { deliveries } = t.app.automations;
    for (const [id, name, result] of [
      ['gh-ignored-1', 'docs', 'ignored: repository.html_url is not an http(s) URL'],
      ['gh-ran-1', 'docs', 'runs: 1'],
      ['gh-waiting-1', 'docs', null],
      ['gh-other-1', 'api', 'runs: 1'],
    ] as const) {
      await deliveries.store({
        projectId,
        name,
        deliveryId: id,
        host: 'github',
        event: 'push',
        contentType: 'application/json',
        body: new TextEncoder().encode('{}'),
      });
      if (result) {
        const row = await t.app.store.db
          .selectFrom('hook_deliveries')
          .select('id')
          .where('delivery_id', '=', id)
          .executeTakeFirstOrThrow();
        await deliveries.markProcessed(row.id, result);
      }
    }

    await page.goto(`/projects/${projectId}/automations/${style.id}`);
    const crumbs = page.locator('.crumbs');
    assert.equal(
      (await crumbs.innerText()).replace(/\s+/g, ' '),
      'Projects / Acme docs / Automations / Style on push',
    );
    assert.equal(
      await crumbs.getByRole('link', { name: 'Automations' }).getAttribute('href'),
      `/projects/${projectId}/automations`,
    );
    const skipped = page.getByRole('row', { name: /own-change/ });
    assert.equal(((await skipped.innerText()).match(/own-change/g) ?? []).length, 1, 'the reason once');
    const runs = page.getByRole('region', { name: 'Runs' });
    assert.match((await runs.getAttribute('class')) ?? '', /panel/, 'the heading is inside its card');

    const section = page.getByRole('region', { name: 'Webhook deliveries' });
    const rows = section.getByRole('row');
    assert.equal(await rows.count(), 4, 'a header and the three deliveries to docs, not those to api');
    assert.match(
      await section.getByRole('row', { name: /gh-ignored-1/ }).innerText(),
      /ignored[\s\S]*html_url is not an http\(s\) URL/,
    );
    assert.match(await section.getByRole('row', { name: /gh-ran-1/ }).innerText(), /1 run/);
    assert.match(await section.getByRole('row', { name: /gh-waiting-1/ }).innerText(), /waiting/);
    assert.deepEqual(await seriousViolations(page), []);
    if (SCREENSHOTS)
      await page.screenshot({ path: path.join(SCREENSHOTS, 'automation-page.png'), fullPage: true });

    // A trigger's type stays one word: between 641 and 900 px it broke as "manu/al" (a page
    // whose only run is a manual one, so that its column is narrow).
    const byHand = await t.app.automations.create(projectId, {
      name: 'By hand',
      trigger: { type: 'manual' },
      instruction: 'Check the links.',
    });
    await t.app.automations.trigger(projectId, byHand.id, {});
    await page.goto(`/projects/${projectId}/automations/${byHand.id}`);
    for (const width of [760, 375]) {
      await page.setViewportSize({ width, height: 900 });
      const manual = page.getByRole('row', { name: /manual/ }).getByText('manual', { exact: true });
      const box = await manual.boundingBox();
      // One line of body text is about 20 px high; two would be twice that.
      assert.ok(box && box.height < 32, `"manual" on one line at ${width} px (${box?.height} px)`);
    }
    if (SCREENSHOTS)
      await page.screenshot({ path: path.join(SCREENSHOTS, 'automation-page-375.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
