import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Change, startCursor } from '../../src/git/hosts/change.ts';
import type { HostOptions } from '../../src/git/hosts/common.ts';
import { createGitHubHost } from '../../src/git/hosts/github.ts';
import { createGitRepository } from '../doubles/git-repository.ts';
import { type GitHubApi, startGitHubApi } from '../doubles/github-api.ts';
import {
  type ChangeScenario,
  changeScenario,
  expectFiles,
  hostError as expectHostError,
  FEATURE,
} from '../helpers/change-scenario.ts';

const FAST: HostOptions = { retry: { baseDelayMs: 1, maxDelayMs: 50 } };
const TOKEN = 'ghp_changesToken0123456789';
const WRONG = 'ghp_wrongToken0123456789';

const hostError = (promise: Promise<unknown>) => expectHostError(promise, [TOKEN, WRONG]);

describe('GitHub changes', () => {
  let github: GitHubApi;
  let scenario: ChangeScenario;
  let pull: number;
  const repository = 'https://github.com/octo/api';
  const host = (token = TOKEN, options: HostOptions = {}) =>
    createGitHubHost({ repository, apiUrl: github.baseUrl }, { token }, { ...FAST, ...options });

  before(async () => {
    github = await startGitHubApi({ tokens: { [TOKEN]: { login: 'docs-bot', push: true } } });
    scenario = changeScenario();
    github.addRepo('octo/api', { git: scenario.repo });
    github.logins['author@example.com'] = 'octocat';
    pull = github.openPull('octo/api', {
      head: FEATURE,
      title: 'Add the export command',
      body: 'Adds `api export`.',
      user: 'octocat',
    }).number;
  });
  after(async () => {
    await github.close();
    scenario.repo.close();
  });

  test('a pull request: metadata, every file as git diffs it, commits oldest first', async () => {
    const change = await host().getChange({ kind: 'pull-request', number: pull });
    const { repo, base, first, second } = scenario;
    assert.deepEqual({ ...change, files: [], commits: [] }, {
      kind: 'pull-request',
      number: pull,
      url: `${github.origin}/octo/api/pull/${pull}`,
      title: 'Add the export command',
      description: 'Adds `api export`.',
      author: 'octocat',
      state: 'open',
      baseRef: 'main',
      headRef: FEATURE,
      baseSha: base,
      headSha: second,
      files: [],
      totalFiles: 6,
      commits: [],
      totalCommits: 2,
      notes: [],
    } satisfies Change);
    expectFiles(change, repo, base, second);
    assert.match(
      change.files.find((f) => f.path === 'src/api.ts')?.diff ?? '',
      /^\+export function exportDocs/m,
    );
    assert.deepEqual(
      change.files.find((f) => f.path === 'src/renamed.ts'),
      {
        path: 'src/renamed.ts',
        previousPath: 'src/old.ts',
        status: 'renamed',
        additions: 0,
        deletions: 0,
        binary: false,
        diff: null,
        truncated: false,
      },
    );
    assert.equal(change.files.find((f) => f.path === 'assets/logo.png')?.binary, true);
    assert.deepEqual(change.commits, [
      { sha: first, message: 'Add the export command\n\nExports the docs in a format.' },
      { sha: second, message: 'Document export\n\nGenerated-By: docwright' },
    ]);
  });

  test('a commit: its files against its parent; the author is the account, or the name without one', async () => {
    const { repo, base, first } = scenario;
    const change = await host().getChange({ kind: 'commit', sha: first.slice(0, 12) });
    assert.deepEqual(
      [change.kind, change.number, change.state, change.headSha, change.baseSha, change.title],
      ['commit', null, null, first, base, 'Add the export command'],
    );
    assert.equal(change.description, 'Exports the docs in a format.');
    assert.equal(change.author, 'octocat');
    assert.equal(change.url, `${github.origin}/octo/api/commit/${first}`);
    expectFiles(change, repo, base, first);
    assert.deepEqual(
      change.commits.map((c) => c.sha),
      [first],
    );
    delete github.logins['author@example.com'];
    try {
      assert.equal((await host().getChange({ kind: 'commit', sha: first })).author, 'Fixture Author');
    } finally {
      github.logins['author@example.com'] = 'octocat';
    }
  });

  test('a range: the comparison from the merge base to the head', async () => {
    const { repo, base, second } = scenario;
    const change = await host().getChange({ kind: 'range', base: 'main', head: FEATURE });
    assert.deepEqual(
      [change.kind, change.baseSha, change.headSha, change.totalCommits, change.commits.length],
      ['range', base, second, 2, 2],
    );
    assert.equal(change.url, `${github.origin}/octo/api/compare/main...${FEATURE}`);
    expectFiles(change, repo, base, second);
  });

  test('a missing or unauthorised change is change-unavailable with GitHub’s answer', async () => {
    const missing = await hostError(host().getChange({ kind: 'pull-request', number: 999 }));
    assert.equal(missing.code, 'change-unavailable');
    assert.equal(missing.retryable, false);
    assert.match(missing.message, /pull request #999 of octo\/api.*not found \(404\).*Not Found/);

    const rejected = await hostError(host(WRONG).getChange({ kind: 'pull-request', number: pull }));
    assert.equal(rejected.code, 'change-unavailable');
    assert.match(rejected.message, /rejected \(401\): Bad credentials/);

    github.answerNext(
      { path: `/pulls/${pull}` },
      {
        status: 403,
        body: {
          message:
            'Resource protected by organization SAML enforcement. You must grant your Personal Access token access to this organization.',
        },
      },
    );
    const denied = await hostError(host().getChange({ kind: 'pull-request', number: pull }));
    assert.equal(denied.code, 'change-unavailable');
    assert.match(denied.message, /\(403\): Resource protected by organization SAML enforcement/);

    const commit = await hostError(host().getChange({ kind: 'commit', sha: 'deadbeefdeadbeef' }));
    assert.equal(commit.code, 'change-unavailable');
    assert.match(commit.message, /No commit found for SHA: deadbeefdeadbeef/);

    const range = await hostError(host().getChange({ kind: 'range', base: 'main', head: 'no-such-branch' }));
    assert.equal(range.code, 'change-unavailable');
    assert.match(range.message, /404/);

    for (let i = 0; i < 4; i++) github.failNext(502, {}, { path: `/pulls/${pull}` });
    const down = await hostError(host().getChange({ kind: 'pull-request', number: pull }));
    assert.deepEqual([down.code, down.retryable], ['change-unavailable', true]);
  });

  test('comments on a pull request as an issue comment; a missing one is change-unavailable', async () => {
    const comment = await host().commentOnChange(pull, 'Docs updated: https://example.com/docs/pull/1');
    const stored = github.repo('octo/api').comments.find((c) => c.id === comment.id);
    assert.deepEqual(
      [stored?.issue, stored?.body, stored?.user],
      [pull, 'Docs updated: https://example.com/docs/pull/1', 'docs-bot'],
    );
    assert.equal(comment.url, `${github.origin}/octo/api/pull/${pull}#issuecomment-${comment.id}`);
    const request = github.requests.at(-1);
    assert.equal(request?.path, `/repos/octo/api/issues/${pull}/comments`);

    const long = await host().commentOnChange(pull, 'x'.repeat(100_000));
    const cut = github.repo('octo/api').comments.find((c) => c.id === long.id);
    assert.ok(
      cut && cut.body.length < 65_536 && cut.body.endsWith('the comment was 100000 characters long]'),
    );

    const missing = await hostError(host().commentOnChange(999, 'hello'));
    assert.equal(missing.code, 'change-unavailable');
    const rejected = await hostError(host(WRONG).commentOnChange(pull, 'hello'));
    assert.equal(rejected.code, 'host-auth-failed');
  });

  test('every request and every answer matched GitHub’s published API description', () => {
    assert.ok(github.requests.length > 10);
    assert.deepEqual(github.violations, []);
  });
});

describe('GitHub changes: bounds', () => {
  let github: GitHubApi;
  const repo = createGitRepository({ 'README.md': '# big\n' });
  const many: Record<string, string> = {};
  for (let i = 0; i < 10_000; i++) many[`files/${String(i).padStart(5, '0')}.txt`] = `line ${i}\n`;
  const huge = `${'a long line of generated text\n'.repeat(40_000)}`;

  before(async () => {
    github = await startGitHubApi({ tokens: { [TOKEN]: { push: true } } });
    github.addRepo('octo/big', { git: repo });
    repo.commit('wide', many, { from: 'main', message: 'Ten thousand files' });
    repo.commit(
      'deep',
      { 'huge.txt': huge, 'small.txt': 'one\ntwo\nthree\n' },
      { from: 'main', message: 'A huge file' },
    );
    github.openPull('octo/big', { head: 'wide', title: 'Wide' });
    github.openPull('octo/big', { head: 'deep', title: 'Deep' });
  });
  after(async () => {
    await github.close();
    repo.close();
  });

  const host = () =>
    createGitHubHost(
      { repository: 'https://github.com/octo/big', apiUrl: github.baseUrl },
      { token: TOKEN },
      FAST,
    );

  test('a pull request of 10,000 files: 300 listed, the rest counted, only the pages needed read', async () => {
    const before = github.requests.length;
    const change = await host().getChange({ kind: 'pull-request', number: 1 });
    assert.equal(change.files.length, 300);
    assert.equal(change.totalFiles, 10_000);
    assert.deepEqual(change.notes, ['showing 300 of 10000 changed files']);
    const pages = github.requests.slice(before).filter((r) => r.path.endsWith('/files'));
    assert.deepEqual(
      pages.map((r) => r.query.get('page')),
      ['1', '2', '3', '4', '5', '6'],
    );
    const small = await host().getChange({ kind: 'pull-request', number: 1 });
    assert.equal(small.files[0]?.path, 'files/00000.txt');
  });

  test('the caller’s bounds: fewer files, each diff cut at a line end, a total for all diffs', async () => {
    const few = await host().getChange({ kind: 'pull-request', number: 1 }, { limits: { maxFiles: 20 } });
    assert.equal(few.files.length, 20);
    assert.equal(few.totalFiles, 10_000);
    const cut = await host().getChange(
      { kind: 'pull-request', number: 1 },
      { limits: { maxFiles: 50, maxFileDiff: 20, maxTotalDiff: 200 } },
    );
    const withDiff = cut.files.filter((f) => f.diff !== null);
    assert.ok(withDiff.every((f) => (f.diff?.length ?? 0) <= 20 && f.diff?.endsWith('\n')));
    assert.ok(
      cut.files.every((f) => f.truncated),
      'every diff was longer than 20 characters',
    );
    assert.ok(withDiff.reduce((sum, f) => sum + (f.diff?.length ?? 0), 0) <= 200);
    assert.ok(
      cut.files.slice(-10).every((f) => f.diff === null),
      'the total was spent before the last files',
    );
    assert.match(cut.notes.join('\n'), /the diffs of 50 files were cut/);
  });

  test('a file GitHub sends no patch for (too large) has its counts and no diff, marked truncated', async () => {
    const change = await host().getChange({ kind: 'pull-request', number: 2 });
    const big = change.files.find((f) => f.path === 'huge.txt');
    assert.deepEqual(
      [big?.additions, big?.deletions, big?.binary, big?.diff, big?.truncated],
      [40_000, 0, false, null, true],
    );
    assert.equal(
      change.files.find((f) => f.path === 'small.txt')?.diff,
      '@@ -0,0 +1,3 @@\n+one\n+two\n+three\n',
    );
  });

  test('no request broke the published description', () => {
    assert.deepEqual(github.violations, []);
  });
});

describe('GitHub merged changes (polling fallback)', () => {
  let github: GitHubApi;
  const repo = createGitRepository({ 'README.md': '# app\n' });
  const repository = 'https://github.com/octo/app';
  const host = () => createGitHubHost({ repository, apiUrl: github.baseUrl }, { token: TOKEN }, FAST);
  let cursorAtStart = startCursor(new Date(0));

  /** Opens a pull request from a new branch with one commit per file. */
  function pullWith(branch: string, files: string[], options: { base?: string; labels?: string[] } = {}) {
    for (const file of files)
      repo.commit(branch, { [file]: `${file}\n` }, { from: options.base ?? 'main', message: `Add ${file}` });
    return github.openPull('octo/app', {
      head: branch,
      base: options.base ?? 'main',
      title: `Pull ${branch}`,
      labels: options.labels ?? [],
    });
  }

  before(async () => {
    github = await startGitHubApi({ tokens: { [TOKEN]: { push: true } } });
    github.addRepo('octo/app', { git: repo });
    // Merged before the automation existed: never listed.
    github.mergePull('octo/app', pullWith('early', ['early.txt']).number);
    repo.tick(60_000);
    cursorAtStart = startCursor(repo.now());
    repo.tick(60_000);
  });
  after(async () => {
    await github.close();
    repo.close();
  });

  test('merges (merge commit, squash, rebase) in merge order and direct pushes; nothing before the cursor, nothing twice', async () => {
    const a = pullWith('a', ['a.txt']);
    github.mergePull('octo/app', a.number, 'merge');
    const pushed = repo.commit('main', { 'direct.txt': 'pushed\n' }, { message: 'Fix a typo directly' });
    const b = pullWith('b', ['b.txt'], { labels: [] });
    github.mergePull('octo/app', b.number, 'squash');
    const c = pullWith('c', ['c1.txt', 'c2.txt']);
    github.mergePull('octo/app', c.number, 'rebase');
    // Closed without merging, and merged into another branch: neither is a merge into main.
    github.closePull('octo/app', pullWith('d', ['d.txt']).number);
    repo.commit('release', {}, { from: 'main', message: 'Branch off' });
    github.mergePull('octo/app', pullWith('e', ['e.txt'], { base: 'release' }).number);

    const listed = await host().listMergedChanges({ ref: 'main', since: cursorAtStart });
    assert.deepEqual(
      listed.merged.map((m) => [m.number, m.headRef, m.mergeCommitSha]),
      [
        [a.number, 'a', a.mergeCommitSha],
        [b.number, 'b', b.mergeCommitSha],
        [c.number, 'c', c.mergeCommitSha],
      ],
    );
    assert.ok(listed.merged.every((m) => m.url?.startsWith(`${github.origin}/octo/app/pull/`)));
    assert.deepEqual(
      listed.pushes.map((p) => [p.sha, p.title]),
      [[pushed, 'Fix a typo directly']],
    );
    assert.equal(listed.more, false);
    assert.equal(listed.cursor.sha, repo.head('main'));
    assert.deepEqual(JSON.parse(JSON.stringify(listed.cursor)), listed.cursor, 'the cursor is plain JSON');

    const again = await host().listMergedChanges({ ref: 'main', since: listed.cursor });
    assert.deepEqual([again.merged, again.pushes], [[], []]);

    // A comment after the merge updates the pull request; it is not listed again.
    await host().commentOnChange(a.number, 'Docs followed');
    const f = pullWith('f', ['f.txt']);
    github.mergePull('octo/app', f.number, 'squash');
    const later = await host().listMergedChanges({ ref: 'main', since: again.cursor });
    assert.deepEqual(
      later.merged.map((m) => m.number),
      [f.number],
    );
    assert.deepEqual(later.pushes, []);
  });

  test('a limit lists the oldest first and the cursor goes on from there, skipping nothing', async () => {
    const start = startCursor(repo.now());
    repo.tick(60_000);
    const numbers: number[] = [];
    for (const branch of ['g', 'h', 'i']) {
      const p = pullWith(branch, [`${branch}.txt`]);
      github.mergePull('octo/app', p.number, 'squash');
      numbers.push(p.number);
    }
    const pushes = [
      repo.commit('main', { 'p1.txt': '1\n' }, { message: 'Push one' }),
      repo.commit('main', { 'p2.txt': '2\n' }, { message: 'Push two' }),
    ];
    let cursor = start;
    const merged: number[] = [];
    const pushed: string[] = [];
    for (let round = 0; round < 5; round++) {
      const page = await host().listMergedChanges({ ref: 'main', since: cursor, limit: 1 });
      merged.push(...page.merged.map((m) => m.number));
      pushed.push(...page.pushes.map((p) => p.sha));
      cursor = page.cursor;
      if (!page.more) break;
    }
    assert.deepEqual(merged, numbers);
    assert.deepEqual(pushed, pushes);
  });

  test('a branch rewritten under the cursor starts over from its tip, listing no pushes', async () => {
    const listed = await host().listMergedChanges({ ref: 'main', since: startCursor(repo.now()) });
    const old = listed.cursor;
    // Rewrite main: a new root the old tip is not part of.
    const rewritten = createGitRepository({ 'README.md': '# rewritten\n' });
    try {
      repo.git(['fetch', '-q', rewritten.dir, '+main:main']);
    } finally {
      rewritten.close();
    }
    const after = await host().listMergedChanges({ ref: 'main', since: old });
    assert.deepEqual(after.pushes, []);
    assert.equal(after.cursor.sha, repo.head('main'));
    assert.match(after.notes.join('\n'), /no longer among the branch's last 500 commits/);
  });

  test('a branch that does not exist is listing-failed', async () => {
    const error = await hostError(host().listMergedChanges({ ref: 'gone', since: startCursor(repo.now()) }));
    assert.equal(error.code, 'listing-failed');
  });

  test('no request or answer broke the published description, and no other repository was asked', () => {
    assert.deepEqual(github.violations, []);
    assert.ok(github.requests.every((r) => r.path.startsWith('/repos/octo/app')));
  });
});
