// The job page of a question (docs/questions.mdx) in a real browser: asked from the New job
// form, it shows the answer live with its sources linked to the lines on the host's web page,
// no pull request, branch or diff, and passes axe; the host double saw no push and no pull request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { waitFor } from '../helpers/worker.ts';
import { createOperator, launchBrowser, seriousViolations, signedIn } from './browser.ts';

const HOME = '---\ntitle: Home\n---\n\nWelcome to the docs.\nThe API allows 50 requests.\n';

describe('job page of a question', () => {
  let t: TestApp;
  let hosted: HostedRepository;
  let model: ScriptedServer;
  let worker: Worker;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let projectId: string;

  before(async () => {
    [t, hosted, model, browser] = await Promise.all([
      startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } }),
      startHostedRepository('github', {
        'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
        'index.mdx': HOME,
      }),
      startOpenAIServer(),
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
    });
    projectId = project.id;
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
    const email = await createOperator(t.app);
    const base = await t.listen();
    ({ context, page } = await signedIn(browser, base, email));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await worker?.stop(0);
    await Promise.all([t?.close(), hosted?.close(), model?.close()]);
  });

  test('asked from the form, the answer arrives live with its sources linked to the lines; nothing is pushed', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }, { delayMs: 1_000 }),
      toolCall('answer', {
        text: 'The API allows **50 requests**.\n\nSee the home page.',
        citations: [{ path: 'index.mdx', startLine: 5, endLine: 6 }],
      }),
    );
    await page.goto(`/projects/${projectId}/jobs`);
    await page.getByLabel('Instruction').fill('How many requests does the API allow?');
    await page.getByLabel('Ask a question instead').check();
    await Promise.all([
      page.waitForURL(/\/jobs\/job_/),
      page.getByRole('button', { name: 'Start job' }).click(),
    ]);
    await page.evaluate('window.stillTheSamePage = true');
    const answer = page.getByRole('region', { name: 'Answer' });
    await answer.getByText('The answer appears here when the agent has given it.').waitFor();
    await waitFor(async () => (await page.getByLabel('Status').textContent()) === 'completed', {
      timeoutMs: 20_000,
    });
    await answer.getByText('The API allows 50 requests.').waitFor();
    assert.equal(
      await answer.locator('strong').textContent(),
      '50 requests',
      'the answer is rendered Markdown',
    );
    assert.equal(await page.evaluate('window.stillTheSamePage'), true, 'updated live, no reload');
    const source = answer.getByRole('link', { name: 'index.mdx:5-6' });
    assert.equal(await source.getAttribute('href'), `${hosted.repository}/blob/main/index.mdx#L5-L6`);
    assert.equal(await page.getByRole('heading', { name: 'Questions' }).count(), 1);
    assert.equal(await page.getByRole('heading', { name: 'Changes' }).count(), 0, 'a question has no diff');
    assert.equal(await page.getByText('Pull request').count(), 0);
    assert.equal(await page.getByText('No documentation change').count(), 0);
    await page.getByLabel('Follow-up question').waitFor();
    assert.deepEqual(await seriousViolations(page), []);

    const jobId = page.url().split('/').at(-1)!;
    assert.equal((await t.app.jobs.get(projectId, jobId)).mode, 'ask');
    assert.deepEqual(hosted.pulls(), [], 'no pull request');
    const pushes = hosted.git.requests.filter((r) => r.url.includes('git-receive-pack'));
    assert.deepEqual(pushes, [], 'nothing was pushed');
    await page.goto(`/projects/${projectId}/jobs`);
    await page.getByText(`${jobId} · question`).waitFor();
  });
});
