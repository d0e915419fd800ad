// The Webhooks page (docs/webhooks.mdx on the dashboard): endpoints added, disabled, enabled and deleted
// through its forms in real Chromium, the secret shown once, and real deliveries — a job run by
// the worker, sent by the dispatcher to a receiver on loopback — listed and re-sent from it.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { WebhookDispatcher } from '../../src/worker/webhook-dispatcher.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../doubles/webhook-receiver.ts';
import { createGitRepository, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';
import { createOperator, launchBrowser, signedIn } from './browser.ts';

interface Payload {
  type: string;
  data: { id: string; status: string };
}

describe('webhooks page: endpoints, the secret shown once, deliveries and re-send', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let worker: Worker;
  let dispatcher: WebhookDispatcher;
  let base: string;
  let repository: string;
  let projectId: string;
  let secret: string;
  const cleanup: string[] = [];

  const hooksPage = () => `/projects/${projectId}/webhooks`;
  const endpointRow = () =>
    page
      .getByRole('region', { name: 'Endpoints' })
      .getByRole('row', { name: new RegExp(`${receiver.url}/hooks`) });
  const deliveryRow = (name: RegExp) =>
    page.getByRole('region', { name: 'Deliveries' }).getByRole('row', { name });
  const deliveries = async () => (await t.app.webhooks.listDeliveries(projectId, { limit: 100 })).deliveries;
  const createJob = async (prompt: string) => (await t.app.jobs.create(projectId, { prompt })).job.id;

  before(async () => {
    [t, model, receiver, browser] = await Promise.all([
      startTestApp({
        env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted', DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE: '1' },
      }),
      startOpenAIServer(),
      startWebhookReceiver(),
      launchBrowser(),
    ]);
    repository = createGitRepository({
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nThe API allows 50 requests.\n',
    });
    const project = await t.app.projects.create({
      name: 'Acme docs',
      repository,
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    projectId = project.id;
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    dispatcher = new WebhookDispatcher(t.app, { pollMs: 100 });
    worker.start();
    dispatcher.start();
    const email = await createOperator(t.app);
    base = await t.listen();
    ({ context, page } = await signedIn(browser, base, email));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await Promise.all([worker?.stop(0), dispatcher?.stop(0)]);
    await Promise.all([t?.close(), model?.close(), receiver?.close()]);
    for (const dir of [repository, ...cleanup]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('an endpoint added from the settings page shows its secret once; a completed job is delivered, listed with its response code, and re-sent with the same webhook-id', async () => {
    await page.goto(`/projects/${projectId}/settings`);
    await page.getByRole('link', { name: 'Manage webhooks and deliveries' }).click();
    await page.waitForURL((url) => url.pathname === hooksPage());
    assert.equal(await page.getByLabel('Signing secret').count(), 0);
    // The docs/webhooks.mdx default: the three ways a job ends.
    for (const [type, checked] of [
      ['job.created', false],
      ['job.completed', true],
      ['job.failed', true],
      ['job.archived', true],
    ] as const) {
      assert.equal(await page.getByRole('checkbox', { name: type }).isChecked(), checked, type);
    }
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/hooks`);
    await page.getByLabel('Description').fill('Docs bot');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    secret = await page.getByLabel('Signing secret').inputValue();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.match(
      await endpointRow().innerText(),
      /Docs bot[\s\S]*job\.completed, job\.failed, job\.archived[\s\S]*enabled/,
    );

    await page.reload();
    await endpointRow().waitFor();
    assert.equal(await page.getByLabel('Signing secret').count(), 0, 'shown once: gone after reload');
    assert.ok(!(await page.content()).includes(secret.slice(6)));
    // The settings page lists the endpoint too.
    await page.goto(`/projects/${projectId}/settings`);
    assert.match(await page.locator('#webhooks').innerText(), new RegExp(`${receiver.url}/hooks\\s+enabled`));

    // A job that completes is delivered; the receiver turns the first attempt away for two minutes.
    receiver.answer({ status: 503, headers: { 'retry-after': '120' }, body: 'receiver is down' });
    model.push(
      toolCall('edit_file', {
        path: 'index.mdx',
        old_string: 'The API allows 50 requests.',
        new_string: 'The API allows 100 requests per hour.',
      }),
      toolCall('finish', { title: 'Update the limit', summary: 'States the new limit.' }),
    );
    const jobId = await createJob('The limit is now 100 requests per hour.');
    const [first] = await receiver.waitFor(1);
    const webhook = new Webhook(secret);
    const sent = webhook.verify(first!.body, first!.headers as Record<string, string>) as Payload;
    assert.equal(sent.type, 'job.completed', 'signed with the secret the page showed');
    assert.equal(sent.data.id, jobId);
    await waitFor(async () => (await deliveries())[0]?.lastStatusCode === 503);

    await page.goto(hooksPage());
    const row = deliveryRow(/job\.completed/);
    const cells = async () => {
      const texts = await row.getByRole('cell').allInnerTexts();
      return texts.map((text) => text.trim());
    };
    let [event, status, attempts, response, next] = await cells();
    assert.match(event!, new RegExp(`^job\\.completed\\s+to ${receiver.url}/hooks\\s+${jobId} · just now$`));
    assert.equal(status, 'pending', 'retried later');
    assert.equal(attempts, '1');
    assert.equal(response, '503');
    assert.equal(next, 'in 2 minutes', 'Retry-After honoured');

    // Re-send now rather than wait: the same message again (answered slowly, to watch it go).
    receiver.answer({ status: 204, delayMs: 1_500 });
    await row.getByRole('button', { name: 'Re-send' }).click();
    await page.getByText(/being sent to .* again, with the same webhook-id msg_/).waitFor();
    await page.evaluate('window.stillTheSamePage = true');
    assert.match((await cells())[1]!, /^(pending|sending)$/);
    const [, again] = await receiver.waitFor(2);
    assert.equal(again!.headers['webhook-id'], first!.headers['webhook-id']);
    assert.equal(
      (webhook.verify(again!.body, again!.headers as Record<string, string>) as Payload).type,
      'job.completed',
    );
    // The list follows the delivery on its way without a reload (a reload shows the same).
    await waitFor(async () => (await cells())[1] === 'succeeded', { timeoutMs: 15_000 });
    assert.equal(await page.evaluate('window.stillTheSamePage'), true, 'updated in place');
    [event, status, attempts, response, next] = await cells();
    assert.equal(status, 'succeeded');
    assert.equal(attempts, '1', 'attempts count from the re-send');
    assert.equal(response, '204');
    assert.equal(next, '—');
    assert.equal(receiver.received.length, 2, 'a succeeded delivery is not retried');

    // The delivery's own page: both attempts, newest first, and the payload.
    await row.getByRole('link', { name: 'job.completed' }).click();
    const history = page.getByRole('region', { name: 'Attempts' }).getByRole('row');
    assert.equal(await history.count(), 3);
    assert.match(await history.nth(1).innerText(), /204/);
    assert.match(await history.nth(2).innerText(), /503[\s\S]*receiver is down/);
    assert.match(
      await page.getByRole('region', { name: 'Payload' }).innerText(),
      new RegExp(`"id": "${jobId}"`),
    );
    assert.match(
      await page.locator('dl.facts').innerText(),
      new RegExp(first!.headers['webhook-id'] as string),
    );
    await page.getByRole('button', { name: 'Re-send' }).click();
    await page.getByText(/being sent to .* again/).waitFor();
    assert.match(page.url(), /\/webhooks\/deliveries\/whd_/, 'back on the delivery’s page');
    await receiver.waitFor(3);
  });

  test('Disable stops deliveries and Re-send; Enable resumes them; Delete removes the endpoint and its history', async () => {
    await worker.stop(0); // jobs now stay queued: only the events this test causes are sent
    receiver.reset();
    await page.goto(hooksPage());
    await endpointRow().getByRole('button', { name: 'Disable' }).click();
    await page.getByText(/Nothing is sent to .* until it is enabled again/).waitFor();
    assert.match(await endpointRow().innerText(), /disabled\s+disabled by ada@example\.com/);
    assert.equal(await page.getByRole('button', { name: 'Re-send' }).count(), 0);
    assert.ok(await page.getByText('Endpoint disabled: enable it to re-send.').first().isVisible());
    const before = (await deliveries()).length;
    await t.app.jobs.archive(projectId, await createJob('Archived while disabled'));
    assert.equal((await deliveries()).length, before, 'nothing queued for a disabled endpoint');

    await endpointRow().getByRole('button', { name: 'Enable' }).click();
    await page.getByText(/gets new events again/).waitFor();
    assert.match(await endpointRow().innerText(), /enabled/);
    const archived = await createJob('Archived while enabled');
    await t.app.jobs.archive(projectId, archived);
    const [delivered] = await receiver.waitFor(1);
    const payload: Payload = JSON.parse(delivered!.body);
    assert.equal(payload.data.id, archived);
    await waitFor(async () => (await deliveries())[0]?.status === 'succeeded');
    await page.reload();
    assert.match(await deliveryRow(/job\.archived/).innerText(), /succeeded/);

    await endpointRow().getByRole('button', { name: 'Delete' }).click();
    await page.getByText(/deleted, with its delivery history/).waitFor();
    assert.equal(await endpointRow().count(), 0);
    assert.deepEqual(await t.app.webhooks.listEndpoints(projectId), []);
    assert.deepEqual(await deliveries(), []);
    await page.getByText('No deliveries yet').waitFor();
    await t.app.jobs.archive(projectId, await createJob('Archived after the delete'));
    assert.deepEqual(await deliveries(), []);
  });

  test('a refused endpoint is shown in the form with what was typed', async () => {
    await page.goto(hooksPage());
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hooks');
    await page.getByRole('checkbox', { name: 'job.failed' }).uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByLabel('Endpoint URL').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Endpoint URL').inputValue(), 'ftp://example.com/hooks');
    assert.equal(
      await page.getByRole('checkbox', { name: 'job.failed' }).isChecked(),
      false,
      'kept as typed',
    );
    assert.equal(await page.getByRole('checkbox', { name: 'job.completed' }).isChecked(), true);

    await page.getByLabel('Endpoint URL').fill('https://hooks.example.com/docwright');
    for (const type of ['job.completed', 'job.archived'])
      await page.getByRole('checkbox', { name: type }).uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.locator('#events-error').innerText(), /at least one event/);
    assert.deepEqual(await t.app.webhooks.listEndpoints(projectId), []);
  });

  test('another project’s endpoints and deliveries cannot be changed through this project’s pages', async () => {
    const theirs = await seedProject(t.app);
    cleanup.push(theirs.repository);
    const endpoint = await t.app.webhooks.createEndpoint(theirs.projectId, {
      url: `${receiver.url}/theirs`,
      events: ['job.created'],
    });
    await t.app.jobs.create(theirs.projectId, { prompt: 'Queued' });
    const [delivery] = (await t.app.webhooks.listDeliveries(theirs.projectId)).deliveries;
    await page.goto(hooksPage());
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const post = (path: string) =>
      page.request.post(`${hooksPage()}/${path}`, {
        form: { _csrf: csrf, next: 'https://evil.example/' },
        headers: { origin: base },
        maxRedirects: 0,
      });
    for (const action of ['disable', 'delete']) {
      assert.equal((await post(`${endpoint.id}/${action}`)).status(), 404, action);
    }
    assert.equal((await post(`deliveries/${delivery!.id}/resend`)).status(), 404);
    assert.equal((await page.request.get(`${hooksPage()}/deliveries/${delivery!.id}`)).status(), 404);
    assert.equal((await t.app.webhooks.getEndpoint(endpoint.id)).enabled, true);

    // And a re-send of this project's own delivery never redirects off the dashboard.
    const mine = await t.app.webhooks.createEndpoint(projectId, { url: `${receiver.url}/mine` });
    await t.app.jobs.archive(projectId, await createJob('One more'));
    const [own] = await deliveries();
    assert.equal(own!.endpointId, mine.id);
    const answer = await post(`deliveries/${own!.id}/resend`);
    assert.equal(answer.status(), 303);
    assert.equal(answer.headers().location, hooksPage());
  });

  test('deliveries come 25 to a page, newest first, by endpoint and by status', async () => {
    // The earlier test's re-send has arrived; from now on nothing changes a delivery meanwhile.
    await waitFor(async () => (await deliveries()).every((d) => d.status === 'succeeded'));
    await Promise.all([worker.stop(0), dispatcher.stop(0)]);
    const many = await t.app.webhooks.createEndpoint(projectId, {
      url: 'https://hooks.example.com/many',
      events: ['job.created'],
    });
    for (let i = 0; i < 27; i++) await createJob(`Job ${i}`);
    const ids = (
      await t.app.webhooks.listDeliveries(projectId, { endpointId: many.id, limit: 100 })
    ).deliveries.map((d) => d.id);
    assert.equal(ids.length, 27);
    const shown = () =>
      page
        .locator('#delivery-list tbody tr a[href*="/deliveries/whd_"]')
        .evaluateAll((links) => links.map((a) => a.getAttribute('href')!.split('/').at(-1)));
    const statuses = () => page.locator('#delivery-list tbody .status').allInnerTexts();

    await page.goto(hooksPage());
    await page
      .getByRole('region', { name: 'Endpoints' })
      .getByRole('row', { name: /hooks\.example\.com\/many/ })
      .getByRole('link', { name: 'Deliveries' })
      .click();
    await page.getByText('To https://hooks.example.com/many only.').waitFor();
    assert.deepEqual(await shown(), ids.slice(0, 25), 'newest first, 25 to a page');
    await page.getByRole('link', { name: 'Older →' }).click();
    assert.deepEqual(await shown(), ids.slice(25));
    assert.equal(await page.getByRole('link', { name: 'Older →' }).count(), 0);
    await page.getByRole('link', { name: '← Newest' }).click();
    assert.deepEqual(await shown(), ids.slice(0, 25));

    // Disabling fails what was waiting; the status filter keeps the endpoint filter.
    await t.app.webhooks.disableEndpoint(many.id);
    await page
      .getByRole('navigation', { name: 'Filter deliveries by status' })
      .getByRole('link', { name: 'Failed' })
      .click();
    assert.deepEqual(await shown(), ids.slice(0, 25));
    assert.deepEqual(new Set(await statuses()), new Set(['failed']));
    await page.getByRole('link', { name: 'Succeeded' }).click();
    await page.getByText('No deliveries here').waitFor();
    await page.getByRole('link', { name: 'Show all endpoints' }).click();
    assert.ok((await shown()).length > 0, 'other endpoints’ succeeded deliveries');
    assert.ok(!(await shown()).some((id) => ids.includes(id!)));
    assert.deepEqual(new Set(await statuses()), new Set(['succeeded']));
  });
});
