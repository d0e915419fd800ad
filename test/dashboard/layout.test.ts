import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOperator, launchBrowser, signedIn } from './browser.ts';

interface Box {
  top: number;
  left: number;
  right: number;
  bottom: number;
}

const box = (page: Page, selector: string): Promise<Box> =>
  page.locator(selector).evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top, left: r.left, right: r.right, bottom: r.bottom };
  });

/** How the dashboard's pages are laid out, in a real browser at a phone's and a screen's width. */
describe('dashboard layout', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let projectId: string;

  before(async () => {
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'anthropic/claude-sonnet-4-5' } });
    const email = await createOperator(t.app);
    await t.app.operators.create({ email: 'grace@example.com', password: 'correct horse battery staple' });
    projectId = (
      await seedProject(t.app, {
        name: 'Acme developer documentation',
        model: 'openai/gpt-5',
        allowedModels: [
          'openai/gpt-5',
          'anthropic/claude-sonnet-4-5',
          'openai/gpt-5-mini',
          'openai/gpt-5-mini',
        ],
      })
    ).projectId;
    const base = await t.listen();
    browser = await launchBrowser();
    ({ context, page } = await signedIn(browser, base, email));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  test('at 375 and 390 px every project tab is in sight, without scrolling the strip', async () => {
    for (const width of [375, 390]) {
      await page.setViewportSize({ width, height: 800 });
      for (const tab of ['jobs', 'keys', 'webhooks', 'settings']) {
        await page.goto(`/projects/${projectId}/${tab}`);
        const strip = page.getByRole('navigation', { name: 'Project' });
        const scrolls = await strip.evaluate((el) => el.scrollWidth > el.clientWidth);
        assert.equal(scrolls, false, `${tab} at ${width} px: the strip hides tabs`);
        for (const link of await strip.getByRole('link').all()) {
          const r = await link.boundingBox();
          assert.ok(r && r.x >= 0 && r.x + r.width <= width, `${await link.innerText()} at ${width} px`);
        }
      }
    }
  });

  test('project cards keep “24 h” and “30 d” on one line at any width', async () => {
    for (const width of [390, 640, 700, 820, 1024, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto('/');
      // The units' text ranges, each on one line (one distinct top among its boxes).
      const split: string[] =
        await page.evaluate(`[...document.querySelectorAll('.stats dt')].flatMap((dt) => {
        const text = dt.firstChild;
        const match = /\\d+\\s[hd]$/.exec(text.data);
        if (!match) return [];
        const range = document.createRange();
        range.setStart(text, match.index);
        range.setEnd(text, text.data.length);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1 ? [text.data] : [];
      })`);
      assert.deepEqual(split, [], `at ${width} px`);
      assert.equal(await page.locator('.stats dt', { hasText: /\d/ }).count(), 3);
    }
  });

  test('the New job form lists each model once', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`/projects/${projectId}/jobs`);
    const options = await page.getByLabel('Model').locator('option').allInnerTexts();
    assert.deepEqual(options, [
      'Project default (openai/gpt-5)',
      'anthropic/claude-sonnet-4-5',
      'openai/gpt-5-mini',
    ]);
  });

  test('forms of one row line up their controls and button', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const rows: [string, string, string[]][] = [
      ['/operators', 'Add operator', ['#operator-email', '#operator-password']],
      [`/projects/${projectId}/keys`, 'Create key', ['#key-name', '#key-expiry']],
    ];
    for (const [path, button, controls] of rows) {
      await page.goto(path);
      const tops = await Promise.all(controls.map((c) => box(page, c).then((b) => Math.round(b.top))));
      const buttonTop = Math.round((await page.getByRole('button', { name: button }).boundingBox())!.y);
      assert.equal(
        new Set([...tops, buttonTop]).size,
        1,
        `${path}: controls at ${tops}, button at ${buttonTop}`,
      );
    }
  });
});
