import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { httpError, type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { waitFor } from '../helpers/worker.ts';
import { createOperator, launchBrowser, signedIn } from './browser.ts';

const MODEL_KEY = 'sk-dashboard-test';
const HOME = '---\ntitle: Home\n---\n\nWelcome to the docs.\nThe API allows 50 requests.\n';

describe('job page: live status and transcript, diff, follow-up, archive', () => {
  let t: TestApp;
  let hosted: HostedRepository;
  let model: ScriptedServer;
  let worker: Worker;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let projectId: string;

  before(async () => {
    [t, hosted, model, browser] = await Promise.all([
      startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } }),
      startHostedRepository('github', {
        'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
        'index.mdx': HOME,
      }),
      startOpenAIServer({ apiKey: MODEL_KEY }),
      launchBrowser(),
    ]);
    const project = await t.app.projects.create({
      name: 'Acme docs',
      repository: hosted.repository,
      host: 'github',
      apiUrl: hosted.apiUrl,
      token: hosted.token,
      ref: 'main',
      openaiCompatibleBaseUrl: model.url,
      openaiCompatibleApiKey: MODEL_KEY,
    });
    projectId = project.id;
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
    const email = await createOperator(t.app);
    base = await t.listen();
    ({ context, page } = await signedIn(browser, base, email));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await worker?.stop(0);
    await Promise.all([t?.close(), hosted?.close(), model?.close()]);
  });

  const status = () => page.getByLabel('Status');

  test('a job started from the New job form updates live, shows its pull request and diff; a follow-up runs on the same pull request', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      // The model takes its time: the page is watched while the job is active.
      toolCall(
        'edit_file',
        {
          path: 'index.mdx',
          old_string: 'The API allows 50 requests.',
          new_string: 'The API allows 100 requests per hour.',
        },
        { delayMs: 1_500 },
      ),
      toolCall(
        'finish',
        { title: 'Update the rate limit', summary: 'States the new limit.' },
        { delayMs: 500 },
      ),
    );
    await page.goto(`/projects/${projectId}/jobs`);
    await page.getByLabel('Instruction').fill('The rate limit is now 100 requests per hour.');
    await Promise.all([
      page.waitForURL(/\/jobs\/job_/),
      page.getByRole('button', { name: 'Start job' }).click(),
    ]);
    // A marker that a reload would lose.
    await page.evaluate('window.stillTheSamePage = true');
    assert.equal(await status().textContent(), 'active');
    await page.getByText('Tool call · read_file').waitFor();
    assert.equal(await status().textContent(), 'active', 'the transcript grows while the job runs');
    await page.getByText('Tool call · edit_file').waitFor({ timeout: 15_000 });
    await waitFor(async () => (await status().textContent()) === 'completed', { timeoutMs: 20_000 });
    assert.equal(await page.evaluate('window.stillTheSamePage'), true, 'updated live, no reload');

    const [pull] = hosted.pulls();
    assert.ok(pull);
    const link = page.getByRole('link', { name: 'Pull request', exact: true });
    await link.waitFor();
    assert.match((await link.getAttribute('href')) ?? '', hosted.pullUrl(pull));
    // The diff, per file, with the changed lines.
    const diff = page.locator('#job-diff');
    await diff.getByText('index.mdx').first().waitFor();
    await diff.getByText('+The API allows 100 requests per hour.').waitFor();
    await diff.getByText('-The API allows 50 requests.').waitFor();

    // Follow-up through the form: a second run on the same branch and pull request.
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall(
        'edit_file',
        { path: 'index.mdx', old_string: 'Welcome to the docs.', new_string: 'Welcome to the Acme docs.' },
        { delayMs: 1_000 },
      ),
      toolCall('finish', { title: 'Name the product', summary: 'Names Acme.' }),
    );
    await page.getByLabel('Follow-up instruction').fill('Say Acme in the welcome line.');
    await page.getByRole('button', { name: 'Send' }).click();
    const sent = page.getByText('Follow-up sent: the agent is working on it.');
    await sent.waitFor();
    await waitFor(async () => (await status().textContent()) === 'completed', { timeoutMs: 20_000 });
    // Once the run has ended, the notice that the agent is working on it goes.
    await sent.waitFor({ state: 'detached' });
    await page.getByText('Names Acme.').first().waitFor();
    assert.equal(hosted.pulls().length, 1, 'the follow-up reused the pull request');
    const jobId = page.url().split('/').at(-1)!;
    const runs = await t.app.store.db
      .selectFrom('job_runs')
      .select('status')
      .where('job_id', '=', jobId)
      .execute();
    assert.deepEqual(
      runs.map((r) => r.status),
      ['succeeded', 'succeeded'],
    );
    // The diff is the branch against the job's base: both runs' changes.
    await diff.getByText('+Welcome to the Acme docs.').waitFor();
    await diff.getByText('+The API allows 100 requests per hour.').waitFor();
    const api = await t.app.jobs.diff(projectId, jobId);
    assert.match(api.diff, /^\+Welcome to the Acme docs\.$/m);
  });

  test('the jobs list shows a status change live; Archive asks, then cancels a running job', async () => {
    model.push(toolCall('read_file', { path: 'index.mdx' }), {
      ...toolCall('finish', { title: 'Slow', summary: 'Never gets here.' }),
      delayMs: 30_000,
    });
    const created = await t.app.jobs.create(projectId, { prompt: 'Take your time' });
    const jobId = created.job.id;
    await page.goto(`/projects/${projectId}/jobs`);
    await page.evaluate('window.stillTheSamePage = true');
    const badge = page.locator(`#status-${jobId}`);
    assert.equal((await badge.textContent())?.trim(), 'active');

    const other = await context.newPage();
    await other.goto(`/projects/${projectId}/jobs/${jobId}`);
    await other.getByText('Tool call · read_file').waitFor({ timeout: 15_000 });
    await other.getByRole('button', { name: 'Archive' }).click();
    // A confirm step first (a form: no JavaScript needed), and nothing cancelled yet (issue 35).
    await other.getByRole('heading', { name: 'Archive a running job?' }).waitFor();
    assert.equal((await t.app.jobs.get(projectId, jobId)).status, 'active');
    assert.equal(
      await other.getByRole('link', { name: 'Keep it running' }).getAttribute('href'),
      `/projects/${projectId}/jobs/${jobId}`,
    );
    await other.getByRole('button', { name: 'Cancel the run and archive' }).click();
    await other.getByText('Job archived: its run was cancelled.').waitFor();
    assert.equal(await other.getByLabel('Status').textContent(), 'archived');
    const run = await t.app.store.db
      .selectFrom('job_runs')
      .select('status')
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    assert.equal(run.status, 'cancelled');
    await other.close();

    await waitFor(async () => (await badge.textContent())?.trim() === 'archived', { timeoutMs: 10_000 });
    assert.equal(await page.evaluate('window.stillTheSamePage'), true, 'the list updated without a reload');
  });

  test('a job that ended without changes says so, with the agent’s reason (no “none yet”); on a phone its details come before the transcript', async () => {
    model.push({
      text: 'Nothing to change.',
      ...toolCall('finish', { title: 'Nothing', summary: 'Already right.' }, { delayMs: 1_000 }),
    });
    const created = await t.app.jobs.create(projectId, { prompt: 'Check the welcome line' });
    const jobId = created.job.id;
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`/projects/${projectId}/jobs/${jobId}`);
    const fact = (name: string) => page.locator('#job-details dt', { hasText: name }).locator('+ dd');
    assert.equal(await fact('Branch').innerText(), 'none yet', 'while the job runs');
    await waitFor(async () => (await status().textContent()) === 'completed', { timeoutMs: 20_000 });
    // Updated live when the run ends, and so rendered after.
    await waitFor(async () => (await fact('Branch').innerText()) === 'none', { timeoutMs: 10_000 });
    // The agent's reason, first in the details, live and after a reload.
    const reason = page.getByRole('note', { name: 'No documentation change' });
    assert.match(await reason.innerText(), /Already right\./);
    await page.reload();
    assert.match(await reason.innerText(), /Already right\./);
    assert.equal(await fact('Branch').innerText(), 'none');
    assert.equal(await fact('Pull request').innerText(), 'None: no files changed');

    const top = (selector: string) => page.locator(selector).evaluate((el) => el.getBoundingClientRect().top);
    const left = (selector: string) =>
      page.locator(selector).evaluate((el) => el.getBoundingClientRect().left);
    // On a screen, beside the instructions; on a phone, above the follow-up form and the transcript.
    assert.ok((await left('#details-heading')) > (await left('#instructions-heading')), 'beside at 1280 px');
    await page.setViewportSize({ width: 390, height: 800 });
    assert.ok(
      (await top('#details-heading')) < (await top('#follow-up-heading')),
      'above the follow-up at 390 px',
    );
    assert.ok(
      (await top('#details-heading')) < (await top('#transcript-heading')),
      'above the transcript at 390 px',
    );
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('a failed job has a Retry button: it runs the last instruction again and the page follows it live', async () => {
    model.push(httpError(401, { message: 'Incorrect API key provided.' }));
    const created = await t.app.jobs.create(projectId, { prompt: 'Name the product' });
    const jobId = created.job.id;
    await waitFor(async () => (await t.app.jobs.get(projectId, jobId)).status === 'failed', {
      timeoutMs: 15_000,
    });
    await page.goto(`/projects/${projectId}/jobs/${jobId}`);
    assert.equal(await status().textContent(), 'failed');

    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('finish', { title: 'Nothing to name', summary: 'The product is named already.' }),
    );
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByText('Retrying: the agent runs the last instruction again.').waitFor();
    // Named alike in the transcript and the list of instructions (issue 35: "Retried" / "Follow-up 1").
    await page.locator('#transcript .kind', { hasText: 'Retry of instruction 1' }).waitFor();
    await waitFor(async () => (await status().textContent()) === 'completed', { timeoutMs: 15_000 });
    await page.locator('#job-instructions', { hasText: 'Retry of instruction 1' }).waitFor();
    const runs = await t.app.store.db
      .selectFrom('job_runs')
      .select(['prompt', 'status'])
      .where('job_id', '=', jobId)
      .orderBy('seq')
      .execute();
    assert.deepEqual(runs, [
      { prompt: 'Name the product', status: 'failed' },
      { prompt: 'Name the product', status: 'succeeded' },
    ]);
    assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0, 'only a failed job offers it');
  });
});
