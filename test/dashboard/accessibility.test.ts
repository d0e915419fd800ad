import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';
import { createOperator, launchBrowser, seriousViolations, signedIn, tooWide } from './browser.ts';

/** Set DOCWRIGHT_SCREENSHOTS=docs/screenshots to refresh the README's pictures from this test. */
const SCREENSHOTS = process.env.DOCWRIGHT_SCREENSHOTS;

describe('every page: no serious or critical axe-core violations, usable at 375 px', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let browser: Browser;
  let base: string;
  let email: string;
  let repository: string;
  const pages: {
    name: string;
    path: string;
    prepare?: (page: import('playwright-core').Page) => Promise<void>;
  }[] = [];

  before(async () => {
    [t, model, browser] = await Promise.all([
      startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } }),
      startOpenAIServer(),
      launchBrowser(),
    ]);
    repository = createGitRepository({
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index', 'rate-limits'] }] } })}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nWelcome to the docs.\n',
      'rate-limits.mdx':
        '---\ntitle: Rate limits\n---\n\nEach key may send 50 requests per hour.\nLimits reset hourly.\n',
    });
    const project = await t.app.projects.create({
      name: 'Acme docs',
      repository,
      openaiCompatibleBaseUrl: model.url,
    });
    await t.app.keys.create(project.id, {
      name: 'GitHub Actions',
      expiresAt: new Date(Date.now() + 30 * 86_400_000),
    });
    // Webhook endpoints, one disabled, whose deliveries (no dispatcher runs) wait to be sent.
    await t.app.webhooks.createEndpoint(project.id, {
      url: 'https://hooks.example.com/docwright/a-rather-long-path-that-must-wrap-on-a-phone',
      description: 'Slack relay',
      events: ['job.created', 'job.completed', 'job.failed', 'job.archived'],
    });
    const gone = await t.app.webhooks.createEndpoint(project.id, { url: 'https://ci.example.org/hooks' });
    await t.app.webhooks.disableGone(gone.id);
    const worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
    model.push(
      {
        text: 'I will read the rate limit page first.',
        ...toolCall('read_file', { path: 'rate-limits.mdx' }),
      },
      toolCall('edit_file', {
        path: 'rate-limits.mdx',
        old_string: 'Each key may send 50 requests per hour.',
        new_string: 'Each project may create 100 jobs per rolling hour; follow-ups count too.',
      }),
      toolCall('finish', {
        title: 'Document the new rate limit',
        summary: 'The rate-limit page states 100 jobs per rolling hour.',
      }),
    );
    const created = await t.app.jobs.create(project.id, {
      prompt:
        'The rate limit is now 100 jobs per rolling hour per project, follow-ups included. Update the docs.',
    });
    const jobId = created.job.id;
    await waitFor(async () => (await t.app.jobs.get(project.id, jobId)).status !== 'active', {
      timeoutMs: 20_000,
    });
    await worker.stop(0);
    await t.app.jobs.create(project.id, { prompt: 'Add a FAQ page about self-hosting' });
    // Every delivery state the page can show: waiting, sent, and given up with an error.
    const [waiting, sent, failed] = (await t.app.webhooks.listDeliveries(project.id)).deliveries;
    const db = t.app.store.db;
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'succeeded', attempts: 1, last_status_code: 204, next_attempt_at: null })
      .where('id', '=', sent!.id)
      .execute();
    await db
      .updateTable('webhook_deliveries')
      .set({
        status: 'failed',
        attempts: 8,
        last_status_code: null,
        last_error: 'ECONNREFUSED: nothing listens at hooks.example.com:443',
        next_attempt_at: null,
      })
      .where('id', '=', failed!.id)
      .execute();
    await db
      .insertInto('webhook_attempts')
      .values([
        {
          delivery_id: failed!.id,
          attempted_at: new Date(Date.now() - 60_000).toISOString(),
          status_code: 502,
          error: 'HTTP 502',
          response_body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
          duration_ms: 31,
        },
        {
          delivery_id: failed!.id,
          attempted_at: new Date().toISOString(),
          status_code: null,
          error: 'ECONNREFUSED: nothing listens at hooks.example.com:443',
          response_body: null,
          duration_ms: 2,
        },
      ])
      .execute();
    email = await createOperator(t.app);
    await t.app.operators.create({ email: 'grace@example.com', password: 'correct horse battery staple' });
    base = await t.listen();
    const p = `/projects/${project.id}`;
    pages.push(
      { name: 'overview', path: '/' },
      { name: 'new-project', path: '/projects/new' },
      { name: 'settings', path: `${p}/settings` },
      {
        name: 'keys',
        path: `${p}/keys`,
        prepare: async (page) => {
          await page.getByLabel('Name').fill('Docs bot');
          await page.getByRole('button', { name: 'Create key' }).click();
          await page.getByLabel('New API key').waitFor();
        },
      },
      { name: 'jobs', path: `${p}/jobs` },
      { name: 'jobs-empty-filter', path: `${p}/jobs?status=failed` },
      { name: 'job', path: `${p}/jobs/${jobId}` },
      {
        name: 'webhooks',
        path: `${p}/webhooks`,
        prepare: async (page) => {
          await page.getByLabel('Endpoint URL').fill('https://hooks.example.com/new');
          await page.getByRole('button', { name: 'Add endpoint' }).click();
          await page.getByLabel('Signing secret').waitFor();
        },
      },
      { name: 'webhooks-filtered', path: `${p}/webhooks?status=sending` },
      { name: 'webhook-delivery', path: `${p}/webhooks/deliveries/${waiting!.id}` },
      { name: 'webhook-delivery-failed', path: `${p}/webhooks/deliveries/${failed!.id}` },
      { name: 'operators', path: '/operators' },
      { name: 'not-found', path: `${p}/jobs/job_01jzzzzzzzzzzzzzzzzzzzzzzz` },
    );
  });
  after(async () => {
    await browser?.close();
    await Promise.all([t?.close(), model?.close()]);
    if (repository) rmSync(repository, { recursive: true, force: true });
  });

  for (const width of [1280, 375]) {
    test(`signed-in pages at ${width} px`, async () => {
      const { context, page } = await signedIn(browser, base, email, { width });
      try {
        for (const entry of pages) {
          await page.goto(entry.path);
          await entry.prepare?.(page);
          assert.deepEqual(await seriousViolations(page), [], `${entry.name} at ${width} px`);
          assert.deepEqual(await tooWide(page), [], `${entry.name} at ${width} px`);
          if (SCREENSHOTS && (entry.name === 'job' || entry.name === 'keys') && width === 1280) {
            mkdirSync(SCREENSHOTS, { recursive: true });
            await page.setViewportSize({ width: 1200, height: entry.name === 'job' ? 1500 : 1100 });
            await page.screenshot({ path: path.join(SCREENSHOTS, `${entry.name}.png`) });
            await page.setViewportSize({ width, height: 900 });
          }
        }
        // Every control is reachable by keyboard: tabbing from the top reaches the job page's Send button.
        await page.goto(pages.find((p) => p.name === 'job')!.path);
        let reached = false;
        for (let i = 0; i < 40 && !reached; i++) {
          await page.keyboard.press('Tab');
          reached = await page.evaluate("document.activeElement?.textContent?.trim() === 'Send'");
        }
        assert.ok(reached, 'Tab reaches the follow-up form');
      } finally {
        await context.close();
      }
    });
  }

  test('signed-out pages (sign-in, first-run setup) at 1280 and 375 px', async () => {
    const fresh = await startTestApp();
    try {
      const token = await fresh.app.firstRunLinks.create();
      const freshBase = await fresh.listen();
      for (const width of [1280, 375]) {
        const context = await browser.newContext({ baseURL: freshBase, viewport: { width, height: 800 } });
        const page = await context.newPage();
        for (const target of ['/login', `/setup?token=${token}`]) {
          await page.goto(target);
          assert.deepEqual(await seriousViolations(page), [], `${target} at ${width} px`);
          assert.deepEqual(await tooWide(page), [], `${target} at ${width} px`);
        }
        await context.close();
      }
    } finally {
      await fresh.close();
    }
  });
});
