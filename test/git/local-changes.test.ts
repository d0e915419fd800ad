import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { startCursor } from '../../src/git/hosts/change.ts';
import { createHost } from '../../src/git/hosts/index.ts';
import { createGitRepository } from '../doubles/git-repository.ts';
import {
  type ChangeScenario,
  changeScenario,
  expectFiles,
  FEATURE,
  hostError,
} from '../helpers/change-scenario.ts';

const localHost = (dir: string) =>
  createHost({ host: 'local', repository: pathToFileURL(dir).href, apiUrl: null }, {});

describe('local changes (git itself)', () => {
  let scenario: ChangeScenario;
  before(() => {
    scenario = changeScenario();
  });
  after(() => scenario.repo.close());

  test('a commit against its first parent', async () => {
    const { repo, base, first } = scenario;
    const change = await localHost(repo.dir).getChange({ kind: 'commit', sha: first.slice(0, 9) });
    assert.deepEqual(
      [
        change.kind,
        change.url,
        change.headSha,
        change.baseSha,
        change.title,
        change.description,
        change.author,
      ],
      [
        'commit',
        null,
        first,
        base,
        'Add the export command',
        'Exports the docs in a format.',
        'Fixture Author',
      ],
    );
    assert.equal(change.totalFiles, 5);
    expectFiles(change, repo, base, first);
  });

  test('a range from the merge base, its commits oldest first', async () => {
    const { repo, base, first, second } = scenario;
    const change = await localHost(repo.dir).getChange({ kind: 'range', base: 'main', head: FEATURE });
    assert.deepEqual([change.baseSha, change.headSha, change.totalCommits], [base, second, 2]);
    assert.deepEqual(change.commits, [
      { sha: first, message: 'Add the export command\n\nExports the docs in a format.' },
      { sha: second, message: 'Document export\n\nGenerated-By: docwright' },
    ]);
    expectFiles(change, repo, base, second);
  });

  test('paths git quotes (spaces, quotes, tabs, non-ASCII) come back as they are', async () => {
    const { repo } = scenario;
    const names = ['docs/a "quoted" name.md', 'docs/tab\there.md', 'docs/café.md', 'docs/back\\slash.md'];
    const sha = repo.commit('odd', Object.fromEntries(names.map((n) => [n, 'x\n'])), { from: 'main' });
    const change = await localHost(repo.dir).getChange({ kind: 'commit', sha });
    assert.deepEqual(change.files.map((f) => f.path).sort(), [...names].sort());
  });

  test('no pull requests; unknown revisions and unrelated histories are change-unavailable', async () => {
    const host = localHost(scenario.repo.dir);
    const pull = await hostError(host.getChange({ kind: 'pull-request', number: 1 }));
    assert.equal(pull.code, 'change-unavailable');
    assert.match(pull.message, /no pull requests/);
    assert.equal((await hostError(host.commentOnChange(1, 'x'))).code, 'change-unavailable');
    const unknown = await hostError(host.getChange({ kind: 'commit', sha: 'deadbeef00' }));
    assert.match(unknown.message, /deadbeef00 is not a commit/);
    const option = await hostError(host.getChange({ kind: 'commit', sha: '--output=/tmp/x' }));
    assert.equal(option.code, 'change-unavailable');
    // A branch of its own root commit.
    scenario.repo.commit('orphan', { 'other.txt': 'other\n' });
    const unrelated = await hostError(host.getChange({ kind: 'range', base: 'main', head: 'orphan' }));
    assert.match(unrelated.message, /no common history/);
  });
});

describe('local changes: bounds', () => {
  const repo = createGitRepository({ 'README.md': '# big\n' });
  const many: Record<string, string> = {};
  for (let i = 0; i < 10_000; i++) many[`files/${String(i).padStart(5, '0')}.txt`] = `line ${i}\n`;
  let wide = '';
  let deep = '';
  before(() => {
    wide = repo.commit('wide', many, { from: 'main' });
    deep = repo.commit(
      'deep',
      { 'huge.txt': 'a line of generated data, repeated\n'.repeat(1_500_000), 'z.txt': 'z\n' },
      { from: 'main' },
    );
  });
  after(() => repo.close());

  test('10,000 files: 300 listed, all counted', async () => {
    const change = await localHost(repo.dir).getChange({ kind: 'commit', sha: wide });
    assert.deepEqual([change.files.length, change.totalFiles], [300, 10_000]);
    assert.deepEqual(change.notes, ['showing 300 of 10000 changed files']);
  });

  test('a 50 MB diff: cut per file, counted as read; past the read bound, git is stopped and nothing made up', async () => {
    const change = await localHost(repo.dir).getChange(
      { kind: 'commit', sha: deep },
      { limits: { maxFileDiff: 5_000 } },
    );
    const huge = change.files.find((f) => f.path === 'huge.txt');
    assert.deepEqual([huge?.additions, huge?.truncated], [1_500_000, true]);
    assert.ok((huge?.diff?.length ?? 0) <= 5_000);
    assert.equal(change.files.find((f) => f.path === 'z.txt')?.diff, '@@ -0,0 +1 @@\n+z\n');
    const cut = await localHost(repo.dir).getChange(
      { kind: 'commit', sha: deep },
      { limits: { maxFileDiff: 5_000, maxDiffRead: 100_000 } },
    );
    assert.deepEqual([cut.files.length, cut.totalFiles], [0, 2]);
    assert.match(cut.notes.join('\n'), /read only in part/);
  });
});

describe('local pushes (polling fallback)', () => {
  const repo = createGitRepository({ 'README.md': '# app\n' });
  after(() => repo.close());

  test('commits on the branch’s first-parent line after the cursor, oldest first, each once', async () => {
    const host = localHost(repo.dir);
    repo.commit('main', { 'before.txt': 'x\n' });
    const start = startCursor(repo.now());
    repo.tick(60_000);
    const one = repo.commit('main', { 'one.txt': '1\n' }, { message: 'One' });
    repo.commit('topic', { 'topic.txt': 't\n' }, { from: 'main', message: 'On a topic branch' });
    const merge = repo.merge('main', 'topic', 'merge', 'Merge topic')[0];
    const listed = await host.listMergedChanges({ ref: 'main', since: start });
    assert.deepEqual(listed.merged, []);
    assert.deepEqual(
      listed.pushes.map((p) => [p.sha, p.title]),
      [
        [one, 'One'],
        [merge, 'Merge topic'],
      ],
    );
    const two = repo.commit('main', { 'two.txt': '2\n' }, { message: 'Two' });
    const next = await host.listMergedChanges({ ref: 'main', since: listed.cursor });
    assert.deepEqual(
      next.pushes.map((p) => p.sha),
      [two],
    );
    const none = await host.listMergedChanges({ ref: 'main', since: next.cursor, limit: 1 });
    assert.deepEqual([none.pushes, none.more], [[], false]);
    const missing = await hostError(host.listMergedChanges({ ref: 'nope', since: start }));
    assert.equal(missing.code, 'listing-failed');
  });
});
