import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { checkoutForRun } from '../../src/git/checkout.ts';
import { commitFiles } from '../../src/git/commit.ts';
import { DIFF_MAX_BYTES, diffAgainstBase } from '../../src/git/diff.ts';
import { createGitRepository } from '../helpers/app.ts';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: 'pipe' }).trim();
const author = { name: 'docwright[bot]', email: 'bot@example.com' };

describe('diffAgainstBase', () => {
  const repos: string[] = [];
  after(() => {
    for (const dir of repos) rmSync(dir, { recursive: true, force: true });
  });
  const repository = (files: Record<string, string>) => {
    const dir = createGitRepository(files);
    repos.push(dir);
    return dir;
  };

  test("a follow-up's shallow checkout diffs against the job's base, fetched by id", async () => {
    const repo = repository({ 'a.md': 'one\ntwo\n', 'b.md': 'keep\n' });
    const base = git(repo, 'rev-parse', 'main');
    const first = await checkoutForRun({ remote: `file://${repo}`, ref: 'main', branch: 'docwright/x' });
    try {
      writeFileSync(path.join(first.dir, 'a.md'), 'one\nTWO\n');
      await commitFiles(first, { files: ['a.md'], message: 'first', author });
      git(first.dir, 'push', '-q', 'origin', 'HEAD:refs/heads/docwright/x');
      const diff = await diffAgainstBase(first, { base: first.base });
      assert.equal(diff.base, base);
      assert.match(diff.text, /^-two\n\+TWO$/m);
      assert.deepEqual([diff.files, diff.additions, diff.deletions, diff.truncated], [1, 1, 1, false]);
    } finally {
      await first.remove();
    }
    // main moves on: the diff still compares with the job's base, not with main's tip.
    writeFileSync(path.join(repo, 'b.md'), 'changed upstream\n');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qam', 'upstream');
    const second = await checkoutForRun({
      remote: `file://${repo}`,
      ref: 'main',
      branch: 'docwright/x',
      // The branch the first run pushed: docwright's own.
      ownsBranch: async () => true,
    });
    try {
      assert.ok(second.existing);
      assert.throws(
        () => git(second.dir, 'cat-file', '-e', `${base}^{commit}`),
        'the base is not in the clone',
      );
      writeFileSync(path.join(second.dir, 'c.md'), 'new page\n');
      await commitFiles(second, { files: ['c.md'], message: 'second', author });
      const diff = await diffAgainstBase(second, { base });
      assert.equal(diff.head, git(second.dir, 'rev-parse', 'HEAD'));
      assert.match(diff.text, /^\+TWO$/m, "the first run's change is still in the job's diff");
      assert.match(diff.text, /^\+\+\+ b\/c\.md$/m);
      assert.doesNotMatch(diff.text, /upstream/, 'changes on the base branch are not the job’s');
      assert.equal(diff.files, 2);
    } finally {
      await second.remove();
    }
  });

  test('a diff over 1 MiB is cut at a line end and ends with the truncation marker', async () => {
    const line = `${'x'.repeat(99)}\n`;
    const repo = repository({ 'big.md': line.repeat(20_000), 'small.md': 'a\n' }); // ~2 MB
    const checkout = await checkoutForRun({ remote: `file://${repo}`, ref: 'main', branch: 'docwright/big' });
    try {
      rmSync(path.join(checkout.dir, 'big.md'));
      await commitFiles(checkout, { files: ['big.md'], message: 'delete', author });
      const diff = await diffAgainstBase(checkout, { base: checkout.base });
      assert.equal(diff.truncated, true);
      assert.ok(Buffer.byteLength(diff.text) <= DIFF_MAX_BYTES, `${Buffer.byteLength(diff.text)} bytes`);
      assert.ok(Buffer.byteLength(diff.text) > DIFF_MAX_BYTES - 200, 'nearly a whole megabyte is kept');
      const lines = diff.text.split('\n');
      assert.match(lines.at(-2)!, /^# docwright: diff truncated at 1048576 bytes \(\d+ bytes in all\)$/);
      assert.equal(lines.at(-3), `-${'x'.repeat(99)}`, 'the last kept line is whole');
      assert.equal(diff.deletions, 20_000);
    } finally {
      await checkout.remove();
    }
  });
});
