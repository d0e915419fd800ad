import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startCursor } from '../../src/git/hosts/change.ts';
import type { HostOptions } from '../../src/git/hosts/common.ts';
import { createGitLabHost } from '../../src/git/hosts/gitlab.ts';
import { createGitRepository } from '../doubles/git-repository.ts';
import { type GitLabApi, startGitLabApi } from '../doubles/gitlab-api.ts';
import {
  type ChangeScenario,
  changeScenario,
  expectFiles,
  hostError as expectHostError,
  FEATURE,
} from '../helpers/change-scenario.ts';

const FAST: HostOptions = { retry: { baseDelayMs: 1, maxDelayMs: 50 } };
const TOKEN = 'glpat-changesToken0123';
const WRONG = 'glpat-wrongToken01234';

const hostError = (promise: Promise<unknown>) => expectHostError(promise, [TOKEN, WRONG]);

describe('GitLab changes', () => {
  let gitlab: GitLabApi;
  let scenario: ChangeScenario;
  let iid: number;
  const repository = 'https://gitlab.example.com/platform/backend/api';
  const host = (token = TOKEN) => createGitLabHost({ repository, apiUrl: gitlab.origin }, { token }, FAST);

  before(async () => {
    gitlab = await startGitLabApi({ tokens: { [TOKEN]: { username: 'docs-bot', accessLevel: 30 } } });
    scenario = changeScenario();
    gitlab.addProject('platform/backend/api', { git: scenario.repo });
    iid = gitlab.openMergeRequest('platform/backend/api', {
      sourceBranch: FEATURE,
      title: 'Add the export command',
      description: 'Adds `api export`.',
      author: 'alice',
    }).iid;
  });
  after(async () => {
    await gitlab.close();
    scenario.repo.close();
  });

  test('a merge request: metadata, files with lines counted from their diffs, commits oldest first', async () => {
    const { repo, base, first, second } = scenario;
    const change = await host().getChange({ kind: 'pull-request', number: iid });
    assert.deepEqual(
      [change.kind, change.number, change.title, change.description, change.author, change.state],
      ['pull-request', iid, 'Add the export command', 'Adds `api export`.', 'alice', 'open'],
    );
    assert.deepEqual(
      [
        change.baseRef,
        change.headRef,
        change.baseSha,
        change.headSha,
        change.totalFiles,
        change.totalCommits,
      ],
      ['main', FEATURE, base, second, 6, 2],
    );
    assert.equal(change.url, `${gitlab.origin}/platform/backend/api/-/merge_requests/${iid}`);
    expectFiles(change, repo, base, second);
    assert.deepEqual(
      change.commits.map((c) => c.sha),
      [first, second],
    );
    assert.match(change.commits[1]?.message ?? '', /Generated-By: docwright$/);
    assert.deepEqual(change.notes, []);
  });

  test('a commit and a range', async () => {
    const { repo, base, first, second } = scenario;
    const commit = await host().getChange({ kind: 'commit', sha: first.slice(0, 10) });
    assert.deepEqual(
      [commit.kind, commit.headSha, commit.baseSha, commit.title, commit.description, commit.author],
      ['commit', first, base, 'Add the export command', 'Exports the docs in a format.', 'Fixture Author'],
    );
    assert.equal(commit.url, `${gitlab.origin}/platform/backend/api/-/commit/${first}`);
    expectFiles(commit, repo, base, first);
    const range = await host().getChange({ kind: 'range', base: 'main', head: FEATURE });
    assert.deepEqual([range.kind, range.headSha, range.totalCommits], ['range', second, 2]);
    assert.deepEqual(
      range.commits.map((c) => c.sha),
      [first, second],
    );
    expectFiles(range, repo, base, second);
  });

  test('a diff GitLab collapsed for its size: no diff, counts unknown, marked truncated', async () => {
    const big = scenario.repo.commit(
      'big',
      { 'big.txt': 'generated line\n'.repeat(20_000) },
      { from: 'main' },
    );
    const grown = scenario.repo.commit('big', {
      'big.txt': 'other line\n'.repeat(20_000),
      'small.txt': 'a\n',
    });
    for (const sha of [big, grown]) {
      const change = await host().getChange({ kind: 'commit', sha });
      const file = change.files.find((f) => f.path === 'big.txt');
      assert.deepEqual(
        [file?.diff, file?.additions, file?.deletions, file?.truncated],
        [null, null, null, true],
      );
    }
    const small = (await host().getChange({ kind: 'commit', sha: grown })).files.find(
      (f) => f.path === 'small.txt',
    );
    assert.deepEqual([small?.diff, small?.additions, small?.truncated], ['@@ -0,0 +1 @@\n+a\n', 1, false]);
  });

  test('files come page by page and stop at the bound', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 250; i++) many[`many/${String(i).padStart(3, '0')}.txt`] = `${i}\n`;
    const sha = scenario.repo.commit('many', many, { from: 'main' });
    const before = gitlab.requests.length;
    const all = await host().getChange({ kind: 'commit', sha });
    assert.deepEqual([all.files.length, all.totalFiles], [250, 250]);
    const pages = gitlab.requests.slice(before).filter((r) => r.path.endsWith('/diff'));
    assert.deepEqual(
      pages.map((r) => r.query.get('page')),
      ['1', '2', '3'],
    );
    const cut = await host().getChange({ kind: 'commit', sha }, { limits: { maxFiles: 120 } });
    assert.deepEqual([cut.files.length, cut.totalFiles], [120, null]);
    assert.match(cut.notes.join('\n'), /more than 120 files/);
  });

  test('missing or refused: change-unavailable with GitLab’s answer', async () => {
    const missing = await hostError(host().getChange({ kind: 'pull-request', number: 999 }));
    assert.equal(missing.code, 'change-unavailable');
    assert.match(missing.message, /merge request !999 of platform\/backend\/api.*404/);
    const rejected = await hostError(host(WRONG).getChange({ kind: 'pull-request', number: iid }));
    assert.equal(rejected.code, 'change-unavailable');
    assert.match(rejected.message, /\(401\): 401 Unauthorized/);
    gitlab.failNext(403, {}, { path: `/merge_requests/${iid}` });
    const denied = await hostError(host().getChange({ kind: 'pull-request', number: iid }));
    assert.match(denied.message, /\(403\): 403 Forbidden/);
    const commit = await hostError(host().getChange({ kind: 'commit', sha: 'deadbeefdead' }));
    assert.match(commit.message, /404 Commit Not Found/);
  });

  test('notes on a merge request', async () => {
    const comment = await host().commentOnChange(iid, 'Docs updated in docs!3');
    const note = gitlab.project('platform/backend/api').notes.find((n) => n.id === comment.id);
    assert.deepEqual([note?.iid, note?.body, note?.author], [iid, 'Docs updated in docs!3', 'docs-bot']);
    assert.equal(comment.url, `${repository}/-/merge_requests/${iid}#note_${comment.id}`);
    const missing = await hostError(host().commentOnChange(999, 'x'));
    assert.equal(missing.code, 'change-unavailable');
  });

  test('requests carried PRIVATE-TOKEN and documented parameters only', () => {
    assert.deepEqual(gitlab.violations, []);
  });
});

describe('GitLab merged changes (polling fallback)', () => {
  let gitlab: GitLabApi;
  const repo = createGitRepository({ 'README.md': '# app\n' });
  const host = () =>
    createGitLabHost(
      { repository: 'https://gitlab.example.com/team/app', apiUrl: gitlab.origin },
      { token: TOKEN },
      FAST,
    );

  function mergeRequestWith(branch: string, files: string[], target = 'main') {
    for (const file of files)
      repo.commit(branch, { [file]: `${file}\n` }, { from: target, message: `Add ${file}` });
    return gitlab.openMergeRequest('team/app', {
      sourceBranch: branch,
      targetBranch: target,
      title: `MR ${branch}`,
      labels: ['api'],
    });
  }

  before(async () => {
    gitlab = await startGitLabApi({ tokens: { [TOKEN]: { accessLevel: 30 } } });
    gitlab.addProject('team/app', { git: repo });
  });
  after(async () => {
    await gitlab.close();
    repo.close();
  });

  test('merges (merge commit, squash, fast-forward after a rebase) and direct pushes, each once', async () => {
    gitlab.mergeMergeRequest('team/app', mergeRequestWith('early', ['early.txt']).iid);
    repo.tick(60_000);
    const start = startCursor(repo.now());
    repo.tick(60_000);
    const a = mergeRequestWith('a', ['a.txt']);
    gitlab.mergeMergeRequest('team/app', a.iid, 'merge');
    const pushed = repo.commit('main', { 'direct.txt': 'x\n' }, { message: 'Push directly' });
    const b = mergeRequestWith('b', ['b1.txt', 'b2.txt']);
    gitlab.mergeMergeRequest('team/app', b.iid, 'squash');
    const c = mergeRequestWith('c', ['c1.txt', 'c2.txt']);
    gitlab.mergeMergeRequest('team/app', c.iid, 'rebase');
    gitlab.closeMergeRequest('team/app', mergeRequestWith('d', ['d.txt']).iid);

    const listed = await host().listMergedChanges({ ref: 'main', since: start });
    assert.deepEqual(
      listed.merged.map((m) => [m.number, m.headRef, m.labels]),
      [
        [a.iid, 'a', ['api']],
        [b.iid, 'b', ['api']],
        [c.iid, 'c', ['api']],
      ],
    );
    assert.deepEqual(
      listed.merged.map((m) => m.mergeCommitSha),
      [a.mergeCommitSha, b.squashCommitSha, null],
    );
    assert.deepEqual(
      listed.pushes.map((p) => p.sha),
      [pushed],
    );
    const commitsListing = gitlab.requests.find((r) => r.path.endsWith('/repository/commits'));
    assert.equal(commitsListing?.query.get('first_parent'), 'true');
    const again = await host().listMergedChanges({ ref: 'main', since: listed.cursor });
    assert.deepEqual([again.merged, again.pushes, again.more], [[], [], false]);
  });

  test('documented parameters only', () => {
    assert.deepEqual(gitlab.violations, []);
  });
});
