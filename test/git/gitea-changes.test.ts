import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startCursor } from '../../src/git/hosts/change.ts';
import type { HostOptions } from '../../src/git/hosts/common.ts';
import { createGiteaHost } from '../../src/git/hosts/gitea.ts';
import { createGitRepository } from '../doubles/git-repository.ts';
import { type GiteaApi, startGiteaApi } from '../doubles/gitea-api.ts';
import {
  type ChangeScenario,
  changeScenario,
  expectFiles,
  hostError as expectHostError,
  FEATURE,
} from '../helpers/change-scenario.ts';

const FAST: HostOptions = { retry: { baseDelayMs: 1, maxDelayMs: 50 } };
const TOKEN = 'giteaChangesToken0123456789';
const WRONG = 'giteaWrongToken0123456789';

const hostError = (promise: Promise<unknown>) => expectHostError(promise, [TOKEN, WRONG]);

describe('Gitea changes', () => {
  let gitea: GiteaApi;
  let scenario: ChangeScenario;
  let number: number;
  const repository = 'http://gitea.local/octo/api';
  const host = (token = TOKEN) =>
    createGiteaHost({ repository, apiUrl: `${gitea.origin}/api/v1` }, { token }, FAST);

  before(async () => {
    gitea = await startGiteaApi({ tokens: { [TOKEN]: { login: 'docs-bot', push: true } } });
    scenario = changeScenario();
    gitea.addRepo('octo/api', { git: scenario.repo });
    number = gitea.openPull('octo/api', {
      head: FEATURE,
      title: 'Add the export command',
      body: 'Adds `api export`.',
      user: 'alice',
    }).number;
  });
  after(async () => {
    await gitea.close();
    scenario.repo.close();
  });

  test('a pull request: files with Gitea’s counts, hunks from its raw diff, commits oldest first', async () => {
    const { repo, base, first, second } = scenario;
    const change = await host().getChange({ kind: 'pull-request', number });
    assert.deepEqual(
      [change.title, change.description, change.author, change.state, change.baseRef, change.headRef],
      ['Add the export command', 'Adds `api export`.', 'alice', 'open', 'main', FEATURE],
    );
    assert.deepEqual(
      [change.baseSha, change.headSha, change.totalFiles, change.totalCommits],
      [base, second, 6, 2],
    );
    assert.equal(change.url, `${gitea.origin}/octo/api/pulls/${number}`);
    expectFiles(change, repo, base, second);
    assert.deepEqual(change.commits, [
      { sha: first, message: 'Add the export command\n\nExports the docs in a format.' },
      { sha: second, message: 'Document export\n\nGenerated-By: docwright' },
    ]);
    const diff = gitea.requests.find((r) => r.path.endsWith(`/pulls/${number}.diff`));
    assert.equal(diff?.sent?.complete, true);
  });

  test('a commit: renames and counts from its raw diff; a range: its commits and the files they touch', async () => {
    const { repo, base, first, second } = scenario;
    const commit = await host().getChange({ kind: 'commit', sha: first });
    assert.deepEqual(
      [commit.headSha, commit.baseSha, commit.title, commit.author, commit.totalFiles],
      [first, base, 'Add the export command', 'Fixture Author', 5],
    );
    expectFiles(commit, repo, base, first);
    const range = await host().getChange({ kind: 'range', base: 'main', head: FEATURE });
    assert.deepEqual([range.headSha, range.totalCommits], [second, 2]);
    assert.deepEqual(
      range.commits.map((c) => c.sha),
      [first, second],
    );
    assert.ok(range.files.every((f) => f.diff === null && f.additions === null));
    assert.ok(range.files.some((f) => f.path === 'src/api.ts' && f.status === 'modified'));
    assert.match(range.notes.join('\n'), /no diff of a range/);
  });

  test('a 50 MB diff: read as it comes, each file kept to its bound; past the read bound, the rest is never read', async () => {
    const { repo } = scenario;
    const line = 'a line of generated data, repeated\n';
    const huge = repo.commit('huge', { 'data/huge.txt': line.repeat(1_500_000) }, { from: 'main' });
    repo.commit('huge', { 'data/small.txt': 'small\n' });
    const pull = gitea.openPull('octo/api', { head: 'huge', title: 'Huge' });
    const limits = { maxFileDiff: 10_000 };
    const change = await host().getChange({ kind: 'pull-request', number: pull.number }, { limits });
    const big = change.files.find((f) => f.path === 'data/huge.txt');
    assert.deepEqual([big?.additions, big?.truncated], [1_500_000, true]);
    assert.ok((big?.diff?.length ?? 0) <= 10_000 && big?.diff?.startsWith('@@ -0,0 +1,1500000 @@\n+a line'));
    assert.equal(change.files.find((f) => f.path === 'data/small.txt')?.diff, '@@ -0,0 +1 @@\n+small\n');

    const commit = await host().getChange({ kind: 'commit', sha: huge }, { limits });
    assert.deepEqual([commit.files[0]?.additions, commit.files[0]?.truncated], [1_500_000, true]);

    // Past maxDiffRead the answer is dropped: the double saw the client go, and nothing is made up.
    const cut = await host().getChange(
      { kind: 'commit', sha: huge },
      { limits: { ...limits, maxDiffRead: 1_000_000 } },
    );
    const streamed = gitea.requests.filter((r) => r.path.endsWith(`${huge}.diff`)).at(-1);
    assert.equal(streamed?.sent?.complete, false);
    assert.ok(
      (streamed?.sent?.bytes ?? Number.POSITIVE_INFINITY) < 20_000_000,
      String(streamed?.sent?.bytes),
    );
    assert.deepEqual(
      [cut.files[0]?.path, cut.files[0]?.additions, cut.files[0]?.diff, cut.files[0]?.truncated],
      ['data/huge.txt', null, null, true],
    );
    assert.match(cut.notes.join('\n'), /read only in part/);
  });

  test('missing or refused: change-unavailable with Gitea’s answer', async () => {
    const missing = await hostError(host().getChange({ kind: 'pull-request', number: 999 }));
    assert.equal(missing.code, 'change-unavailable');
    assert.match(missing.message, /pull request #999 of octo\/api.*404.*The target couldn't be found/);
    const rejected = await hostError(host(WRONG).getChange({ kind: 'pull-request', number }));
    assert.match(rejected.message, /\(401\)/);
    assert.equal(rejected.code, 'change-unavailable');
  });

  test('comments on the pull request as an issue comment', async () => {
    const comment = await host().commentOnChange(number, 'Docs: https://example.com/docs/pulls/4');
    const stored = gitea.repo('octo/api').comments.find((c) => c.id === comment.id);
    assert.deepEqual([stored?.issue, stored?.user], [number, 'docs-bot']);
    assert.equal(comment.url, `${gitea.origin}/octo/api/pulls/${number}#issuecomment-${comment.id}`);
    assert.equal((await hostError(host().commentOnChange(999, 'x'))).code, 'change-unavailable');
  });

  test('documented parameters only', () => {
    assert.deepEqual(gitea.violations, []);
  });
});

describe('Gitea merged changes (polling fallback)', () => {
  let gitea: GiteaApi;
  const repo = createGitRepository({ 'README.md': '# app\n' });
  const host = () =>
    createGiteaHost(
      { repository: 'http://gitea.local/team/app', apiUrl: `${gitea.origin}/api/v1` },
      { token: TOKEN },
      FAST,
    );

  function pullWith(branch: string, files: string[]) {
    for (const file of files)
      repo.commit(branch, { [file]: `${file}\n` }, { from: 'main', message: `Add ${file}` });
    return gitea.openPull('team/app', { head: branch, title: `Pull ${branch}` });
  }

  before(async () => {
    gitea = await startGiteaApi({ tokens: { [TOKEN]: { push: true } } });
    gitea.addRepo('team/app', { git: repo });
  });
  after(async () => {
    await gitea.close();
    repo.close();
  });

  test('merges of every style and direct pushes, each once; a rebase merge’s commits are not pushes', async () => {
    const start = startCursor(repo.now());
    repo.tick(60_000);
    const a = pullWith('a', ['a.txt']);
    gitea.mergePull('team/app', a.number, 'merge');
    const pushed = repo.commit('main', { 'direct.txt': 'x\n' }, { message: 'Push directly' });
    const b = pullWith('b', ['b1.txt', 'b2.txt']);
    gitea.mergePull('team/app', b.number, 'squash');
    const c = pullWith('c', ['c1.txt', 'c2.txt', 'c3.txt']);
    gitea.mergePull('team/app', c.number, 'rebase');
    gitea.closePull('team/app', pullWith('d', ['d.txt']).number);

    const listed = await host().listMergedChanges({ ref: 'main', since: start });
    assert.deepEqual(
      listed.merged.map((m) => m.number),
      [a.number, b.number, c.number],
    );
    assert.deepEqual(
      listed.pushes.map((p) => p.sha),
      [pushed],
    );
    const again = await host().listMergedChanges({ ref: 'main', since: listed.cursor });
    assert.deepEqual([again.merged, again.pushes], [[], []]);
  });

  test('documented parameters only', () => {
    assert.deepEqual(gitea.violations, []);
  });
});
