// The polling fallback against the GitHub double over real git and real HTTP, on both
// databases: a context repository's merged pull requests and direct pushes since the automation
// was created are found by poll (labelled ones skipped `label`, files read for `paths`); the same
// merge then arriving by webhook creates nothing new; a second poll finds nothing. The context
// repository has no `ref`: its default branch is asked of GitHub.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { commitMessage } from '../../src/git/commit.ts';
import { AutomationLoop } from '../../src/worker/automation-loop.ts';
import { createGitRepository } from '../doubles/git-repository.ts';
import { type GitHubApi, startGitHubApi } from '../doubles/github-api.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { samplePayload, signedHeaders } from '../helpers/hook-deliveries.ts';

const TOKEN = 'ghp_pollToken0123456789abcdef';

describe('polling a GitHub context repository', () => {
  let github: GitHubApi;
  let t: TestApp;
  const repo = createGitRepository({ 'README.md': '# app\n', 'src/app.ts': 'export {};\n' });
  let clock = repo.now();
  let base: string | undefined;
  const baseUrl = async () => (base ??= await t.listen());

  function pullWith(branch: string, files: Record<string, string>, labels: string[] = []) {
    repo.commit(branch, files, { from: 'main', message: `Change ${branch}` });
    return github.openPull('octo/app', { head: branch, base: 'main', title: `Pull ${branch}`, labels });
  }

  before(async () => {
    github = await startGitHubApi({ tokens: { [TOKEN]: { push: true } } });
    github.addRepo('octo/app', { git: repo });
    github.repo('octo/app').labels.set('no-docs', { id: 1, name: 'no-docs', color: 'ededed' });
    // Merged before the automation existed: never triggers.
    github.mergePull('octo/app', pullWith('early', { 'early.txt': 'x\n' }).number);
    repo.tick(60_000);
    clock = repo.now();
    t = await startTestApp({ now: () => clock });
  });
  after(async () => {
    await t?.close();
    await github.close();
    repo.close();
  });

  test('merges and pushes since creation run once each, by poll and then by webhook', async () => {
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: 'https://github.com/octo/docs',
      token: TOKEN,
      ref: 'main',
      model: 'openai/gpt-test',
    });
    const context = await t.app.contextRepositories.add(project.id, {
      name: 'app',
      repository: 'https://github.com/octo/app',
      apiUrl: github.baseUrl,
      // No ref: the watched branch is the default branch GitHub reports.
      token: TOKEN,
    });
    const all = await t.app.automations.create(project.id, {
      name: 'Every change',
      trigger: { type: 'code-change' },
      instruction: 'Update the docs.',
    });
    const sources = await t.app.automations.create(project.id, {
      name: 'Source changes',
      trigger: { type: 'code-change', repositories: ['app'], paths: ['src/**'] },
      instruction: 'Update the API reference.',
    });
    repo.tick(60_000);
    const feature = pullWith('feature', { 'src/app.ts': 'export const x = 1;\n' });
    github.mergePull('octo/app', feature.number, 'squash');
    const labelled = pullWith('chore', { 'notes.txt': 'n\n' }, ['no-docs']);
    github.mergePull('octo/app', labelled.number);
    const readme = pullWith('readme', { 'README.md': '# app, renamed\n' });
    github.mergePull('octo/app', readme.number, 'rebase');
    clock = repo.now();

    const loop = new AutomationLoop(t.app, { pollSeconds: 0, pushSettleMs: 0 });
    assert.equal(await loop.poll(), 6, 'three merges for two automations');
    assert.equal(await loop.poll(), 0, 'the cursor moved on');
    const runsOf = async (id: string) => (await t.app.automations.runs(project.id, id)).runs;
    const outcomes = (runs: Awaited<ReturnType<typeof runsOf>>) =>
      runs
        .map((r) => [(r.trigger.changes[0] as { pullRequest: number }).pullRequest, r.outcome, r.reason])
        .sort();
    assert.deepEqual(outcomes(await runsOf(all.id)), [
      [feature.number, 'running', null],
      [labelled.number, 'skipped', 'label'],
      [readme.number, 'running', null],
    ]);
    // The files of each merge come from GitHub: the README change touches no source.
    assert.deepEqual(outcomes(await runsOf(sources.id)), [
      [feature.number, 'running', null],
      [labelled.number, 'skipped', 'label'],
      [readme.number, 'skipped', 'paths'],
    ]);

    // GitHub's webhook for the same merge arrives late: nothing new.
    const payload = samplePayload('github-pull-request-merged');
    payload.repository.html_url = 'https://github.com/octo/app';
    payload.number = feature.number;
    payload.pull_request.number = feature.number;
    payload.pull_request.merge_commit_sha = github
      .repo('octo/app')
      .pulls.find((p) => p.number === feature.number)!.mergeCommitSha;
    payload.pull_request.labels = [];
    const body = JSON.stringify(payload);
    const res = await fetch(`${await baseUrl()}/hooks/${project.id}/app`, {
      method: 'POST',
      headers: signedHeaders('github', 'pull_request', body, context.webhookSecret),
      body,
    });
    assert.equal(res.status, 202);
    await loop.processDeliveries();
    assert.equal((await runsOf(all.id)).length, 3);
    assert.equal((await runsOf(sources.id)).length, 3);
    assert.deepEqual(github.violations, []);
  });

  test("a pull request whose commits all carry docwright's trailer is its own change, from any branch, by poll and by webhook", async () => {
    const project = await t.app.projects.create({
      name: 'Docs 2',
      repository: 'https://github.com/octo/docs2',
      token: TOKEN,
      ref: 'main',
      model: 'openai/gpt-test',
    });
    const context = await t.app.contextRepositories.add(project.id, {
      name: 'app',
      repository: 'https://github.com/octo/app',
      apiUrl: github.baseUrl,
      token: TOKEN,
    });
    const automation = await t.app.automations.create(project.id, {
      name: 'Every change',
      trigger: { type: 'code-change' },
      instruction: 'Update the docs.',
    });
    repo.tick(60_000);
    // Branches outside the prefix (docwright/): only the commits can tell.
    const own = commitMessage('Sync the docs', 'Explains --json.', 'run_01');
    const coAuthored = `${own}\n\nCo-authored-by: Grace <grace@example.com>`;
    const pullOf = (branch: string, messages: string[]) => {
      messages.forEach((message, i) => {
        repo.commit(branch, { [`${branch}-${i}.md`]: `${i}\n` }, { from: 'main', message });
      });
      return github.openPull('octo/app', { head: branch, base: 'main', title: `Pull ${branch}` });
    };
    const bot = pullOf('bots/sync', [own, coAuthored]);
    github.mergePull('octo/app', bot.number);
    const mixed = pullOf('bots/mixed', [own, 'Fix the limit by hand']);
    github.mergePull('octo/app', mixed.number, 'squash');
    clock = repo.now();

    const loop = new AutomationLoop(t.app, { pollSeconds: 0, pushSettleMs: 0 });
    // The first test's project watches this repository too: its automations run these as well.
    assert.equal(await loop.poll(), 6);
    const runs = async () =>
      new Map(
        (await t.app.automations.runs(project.id, automation.id)).runs.map((r) => [
          (r.trigger.changes[0] as { pullRequest: number }).pullRequest,
          [r.outcome, r.reason],
        ]),
      );
    assert.deepEqual(
      await runs(),
      new Map([
        [bot.number, ['skipped', 'own-change']],
        [mixed.number, ['running', null]],
      ]),
    );

    // By webhook: the event lists no commits; they are read from GitHub.
    repo.tick(60_000);
    const second = pullOf('bots/second', [coAuthored]);
    const merged = github.mergePull('octo/app', second.number);
    const payload = samplePayload('github-pull-request-merged');
    payload.repository.html_url = 'https://github.com/octo/app';
    payload.number = second.number;
    payload.pull_request.number = second.number;
    payload.pull_request.merge_commit_sha = merged.mergeCommitSha;
    payload.pull_request.head.ref = 'bots/second';
    payload.pull_request.head.sha = merged.headSha;
    payload.pull_request.labels = [];
    const body = JSON.stringify(payload);
    const res = await fetch(`${await baseUrl()}/hooks/${project.id}/app`, {
      method: 'POST',
      headers: signedHeaders('github', 'pull_request', body, context.webhookSecret),
      body,
    });
    assert.equal(res.status, 202);
    await loop.processDeliveries();
    assert.deepEqual((await runs()).get(second.number), ['skipped', 'own-change']);
    assert.equal(
      (await t.app.store.db.selectFrom('jobs').select('id').where('project_id', '=', project.id).execute())
        .length,
      1,
      'only the mixed pull request started a job',
    );
    assert.deepEqual(github.violations, []);
  });
});
