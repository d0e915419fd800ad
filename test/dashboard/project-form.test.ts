import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DEFAULT_KEY_EXPIRY_DAYS } from '../../src/keys/keys.ts';
import { PROJECT_DEFAULTS, type ProjectView } from '../../src/projects/projects.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/process.ts';
import { createOperator, launchBrowser, signedIn } from './browser.ts';

/** Submits the form with `button`; fails with the page's error list unless the form was taken (303). */
async function submit(page: Page, button: string): Promise<void> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: button }).click(),
  ]);
  await page.waitForLoadState();
  const errors = response.status() === 303 ? '' : await page.locator('#form-errors').innerText();
  assert.equal(response.status(), 303, errors);
}

/** The first form a new user submits: New project, as it comes, then its Settings. */
describe('the project form in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    t = await startTestApp();
    const email = await createOperator(t.app);
    const base = await t.listen();
    browser = await launchBrowser();
    ({ context, page } = await signedIn(browser, base, email));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  test('New project with its defaults creates the project; Settings saves them unchanged', async () => {
    await page.goto('/projects/new');
    await page.getByLabel('Name', { exact: true }).fill('Docs');
    await page.getByLabel('Repository', { exact: true }).fill(createGitRepository());
    await submit(page, 'Create project');
    assert.match(new URL(page.url()).pathname, /^\/projects\/prj_\w+\/jobs$/);
    const [project] = await t.app.projects.list();
    assert.deepEqual(project!.settings, { ...PROJECT_DEFAULTS, writable: [...PROJECT_DEFAULTS.writable] });

    await page.goto(`/projects/${project!.id}/settings`);
    await submit(page, 'Save settings');
    await page.getByText('Settings saved.').waitFor();
    assert.deepEqual((await t.app.projects.get(project!.id)).settings, project!.settings);
  });

  test('Check commands: one a line on the settings page, commas and all; emptied, none', async () => {
    const [project] = await t.app.projects.list();
    await page.goto(`/projects/${project!.id}/settings`);
    await page
      .getByLabel('Check commands')
      .fill('vale docs\n\n  npx cspell "docs/**/*.md", --no-progress  \n');
    await submit(page, 'Save settings');
    assert.deepEqual((await t.app.projects.get(project!.id)).checks, [
      'vale docs',
      'npx cspell "docs/**/*.md", --no-progress',
    ]);
    await page.goto(`/projects/${project!.id}/settings`);
    assert.equal(
      await page.getByLabel('Check commands').inputValue(),
      'vale docs\nnpx cspell "docs/**/*.md", --no-progress',
    );
    await page.getByLabel('Check commands').fill('');
    await submit(page, 'Save settings');
    assert.deepEqual((await t.app.projects.get(project!.id)).checks, []);
  });

  test('a refused field is named by its label, and marked', async () => {
    await page.goto('/projects/new');
    await page.getByLabel('Name', { exact: true }).fill('Docs');
    await page.getByLabel('Repository', { exact: true }).fill(createGitRepository());
    await page.getByLabel('Commit author email').fill('not an address');
    await page.getByLabel('Writable files').fill('**/*.md\ndocs\\');
    await page.getByRole('button', { name: 'Create project' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    assert.match(text, /Commit author email: must be an address/);
    assert.match(text, /Writable files: must be a glob/);
    assert.doesNotMatch(text, /authorEmail|writable\b/);
    assert.equal(await page.getByLabel('Commit author email').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Writable files').getAttribute('aria-invalid'), 'true');
    assert.equal((await t.app.projects.list()).length, 1, 'nothing more was created');
  });

  test('New project sent empty: each required field is marked and said in words, no validator jargon (issue 35)', async () => {
    await page.goto('/projects/new');
    // A new project has no credentials to be "set" or "not set" yet.
    assert.doesNotMatch(await page.locator('form.stack').innerText(), /Not set/);
    assert.match(
      await page.locator('#openaiCompatibleApiKey-hint').innerText(),
      /OpenAI-compatible base URL above/,
      'the hint names the field where it is',
    );
    await page.getByRole('button', { name: 'Create project' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    assert.match(text, /Name: is required/);
    assert.match(text, /Repository: is required/);
    assert.doesNotMatch(text, /Too small|expected string|>=1/);
    const border = (label: string) =>
      page
        .getByLabel(label, { exact: true })
        .evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).borderTopColor);
    const plain = await border('Base branch');
    for (const label of ['Name', 'Repository']) {
      assert.equal(await page.getByLabel(label, { exact: true }).getAttribute('aria-invalid'), 'true', label);
      assert.notEqual(await border(label), plain, `${label} is highlighted`);
    }
    if (process.env.DOCWRIGHT_SCREENSHOTS)
      await page.screenshot({ path: `${process.env.DOCWRIGHT_SCREENSHOTS}/new-project-empty.png` });
  });

  test('the dashboard and the CLI give a new project and a new key the same defaults', async () => {
    const repository = createGitRepository();
    await page.goto('/projects/new');
    await page.getByLabel('Name', { exact: true }).fill('From the dashboard');
    await page.getByLabel('Repository', { exact: true }).fill(repository);
    await submit(page, 'Create project');
    const projectId = /prj_\w+/.exec(page.url())![0];
    await page.goto(`/projects/${projectId}/keys`);
    await submit(page, 'Create key');

    const cli = async (...args: string[]) => {
      const run = await runCli([...args, '--json'], t.database.env);
      assert.equal(run.code, 0, run.stderr);
      return JSON.parse(run.stdout);
    };
    const fromCli: ProjectView = await cli(
      'project',
      'create',
      '--name',
      'From the CLI',
      '--repository',
      repository,
    );
    const cliKey = await cli('key', 'create', '--project', fromCli.id);

    assert.deepEqual(fromCli.settings, (await t.app.projects.get(projectId)).settings);
    const [dashboardKey] = await t.app.keys.list(projectId);
    const days = (key: { createdAt: string; expiresAt: string | null }) =>
      key.expiresAt && Math.round((Date.parse(key.expiresAt) - Date.parse(key.createdAt)) / 86_400_000);
    assert.equal(days(dashboardKey!), DEFAULT_KEY_EXPIRY_DAYS);
    assert.equal(days(cliKey), DEFAULT_KEY_EXPIRY_DAYS);
  });
});
