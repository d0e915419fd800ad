// What the hosts share to read changes: the bounded readers (lines, HTTP bodies, git's diff
// format), the file bounds, the cursor, and the one listing of merged changes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  countDiffLines,
  DEFAULT_CHANGE_LIMITS,
  FileCollector,
  hunksOf,
  parseCursor,
  startCursor,
} from '../../src/git/hosts/change.ts';
import { type DiffFile, GitDiffReader, unquoteGitPath } from '../../src/git/hosts/git-diff.ts';
import { hasNextPage, readBounded } from '../../src/git/hosts/http.ts';
import {
  type BranchCommit,
  type ListedPullRequest,
  listMergedChanges,
} from '../../src/git/hosts/merged-changes.ts';
import { LineSplitter } from '../../src/git/lines.ts';

describe('LineSplitter', () => {
  test('lines across pieces, CRLF, a last line without its end, a stop', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => {
      lines.push(line);
      return line !== 'stop';
    });
    assert.ok(splitter.push('one\r\ntw'));
    assert.ok(splitter.push('o\n\nthr'));
    assert.ok(splitter.end());
    assert.deepEqual(lines, ['one', 'two', '', 'thr']);
    const stopped = new LineSplitter((line) => line !== 'stop');
    assert.equal(stopped.push('a\nstop\nb\n'), false);
    assert.equal(stopped.stopped, true);
  });

  test('a line longer than the bound is cut to it; the next line is whole', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => void lines.push(line), 10);
    for (let i = 0; i < 1_000; i++) splitter.push('x'.repeat(1_000));
    splitter.push('\nnext\n');
    assert.deepEqual(lines, ['x'.repeat(10), 'next']);
  });
});

describe('readBounded', () => {
  test('an endless body is read up to the bound and cancelled', async () => {
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode('{"a":"'.concat('x'.repeat(1024))));
      },
      cancel() {
        cancelled = true;
      },
    });
    const { text, complete } = await readBounded(endless, 100_000);
    assert.equal(complete, false);
    assert.equal(text.length, 100_000);
    assert.ok(cancelled && pulled < 200);
  });
});

test('hasNextPage: Link, x-next-page, x-hasmore, else a full page', () => {
  assert.equal(
    hasNextPage({ link: '<https://x/?page=2>; rel="next", <https://x/?page=9>; rel="last"' }, 1, 100),
    true,
  );
  assert.equal(hasNextPage({ link: '<https://x/?page=1>; rel="first"' }, 100, 100), false);
  assert.equal(hasNextPage({ 'x-next-page': '3' }, 1, 100), true);
  assert.equal(hasNextPage({ 'x-next-page': '' }, 100, 100), false);
  assert.equal(hasNextPage({ 'x-hasmore': 'true' }, 1, 50), true);
  assert.equal(hasNextPage({}, 50, 50), true);
  assert.equal(hasNextPage({}, 49, 50), false);
});

describe("git's diff format", () => {
  const read = (text: string, maxFileDiff = 1_000) => {
    const files: DiffFile[] = [];
    const reader = new GitDiffReader({ maxFileDiff, onFile: (f) => void files.push(f) });
    for (const line of text.split('\n')) reader.line(line);
    reader.end();
    return files;
  };

  test('modifications, additions, removals, renames, copies, binary files and mode changes', () => {
    const files = read(
      [
        'diff --git a/src/api.ts b/src/api.ts',
        'index 1111111..2222222 100644',
        '--- a/src/api.ts',
        '+++ b/src/api.ts',
        '@@ -1,3 +1,3 @@',
        ' keep',
        '--- a line that starts with two dashes, removed',
        '+++ a line that starts with two pluses, added',
        '\\ No newline at end of file',
        'diff --git a/new.md b/new.md',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/new.md',
        '@@ -0,0 +1 @@',
        '+hello',
        'diff --git a/gone.md b/gone.md',
        'deleted file mode 100644',
        '--- a/gone.md',
        '+++ /dev/null',
        '@@ -1 +0,0 @@',
        '-bye',
        'diff --git a/old name.md b/new name.md',
        'similarity index 100%',
        'rename from old name.md',
        'rename to new name.md',
        'diff --git a/a.md b/b.md',
        'similarity index 90%',
        'copy from a.md',
        'copy to b.md',
        'diff --git a/logo.png b/logo.png',
        'new file mode 100644',
        'Binary files /dev/null and b/logo.png differ',
        'diff --git a/run.sh b/run.sh',
        'old mode 100644',
        'new mode 100755',
        '',
      ].join('\n'),
    );
    assert.deepEqual(
      files.map((f) => [f.path, f.previousPath, f.status, f.additions, f.deletions, f.binary]),
      [
        ['src/api.ts', null, 'modified', 1, 1, false],
        ['new.md', null, 'added', 1, 0, false],
        ['gone.md', null, 'removed', 0, 1, false],
        ['new name.md', 'old name.md', 'renamed', 0, 0, false],
        ['b.md', 'a.md', 'added', 0, 0, false],
        ['logo.png', null, 'added', 0, 0, true],
        ['run.sh', null, 'modified', 0, 0, false],
      ],
    );
    assert.equal(
      files[0]?.diff,
      '@@ -1,3 +1,3 @@\n keep\n--- a line that starts with two dashes, removed\n+++ a line that starts with two pluses, added\n\\ No newline at end of file\n',
    );
  });

  test('quoted paths: escapes and UTF-8 bytes in octal', () => {
    assert.equal(unquoteGitPath('"docs/caf\\303\\251 \\"x\\"\\tb.md"'), 'docs/café "x"\tb.md');
    assert.equal(unquoteGitPath('plain.md'), 'plain.md');
    const [file] = read(
      'diff --git "a/t\\tab.md" "b/t\\tab.md"\nnew file mode 100644\nBinary files /dev/null and "b/t\\tab.md" differ\n',
    );
    assert.equal(file?.path, 't\tab.md');
  });

  test('a file’s kept hunks stop at the bound (whole lines), its counts do not', () => {
    const body = Array.from({ length: 100 }, (_, i) => `+line ${i}`).join('\n');
    const [file] = read(`diff --git a/x b/x\n--- /dev/null\n+++ b/x\n@@ -0,0 +1,100 @@\n${body}\n`, 50);
    assert.equal(file?.additions, 100);
    assert.equal(file?.truncated, true);
    assert.ok((file?.diff.length ?? 0) <= 50 && file?.diff.endsWith('\n'));
  });

  test('counting and trimming hunks of host diffs', () => {
    assert.deepEqual(countDiffLines('@@ -1,2 +1,2 @@\n-a\n+b\n c\n'), { additions: 1, deletions: 1 });
    assert.deepEqual(countDiffLines('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b'), { additions: 1, deletions: 1 });
    assert.equal(hunksOf('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n'), '@@ -1 +1 @@\n-a\n');
    assert.equal(hunksOf('Binary files differ\n'), '');
  });
});

describe('FileCollector', () => {
  const file = (path: string, diff: string | null) => ({
    path,
    previousPath: null,
    status: 'modified' as const,
    additions: 1,
    deletions: 0,
    binary: false,
    diff,
  });

  test('keeps the first maxFiles, cuts each diff at a line end, spends a total, and says so', () => {
    const files = new FileCollector({
      ...DEFAULT_CHANGE_LIMITS,
      maxFiles: 3,
      maxFileDiff: 12,
      maxTotalDiff: 20,
    });
    files.add(file('a', '@@ 1\n+aaaa\n+bbbb\n'));
    files.add(file('b', '@@ 2\n+cc\n'));
    files.add(file('c', '@@ 3\n+dd\n'));
    files.add(file('d', '@@ 4\n'));
    assert.deepEqual(
      files.files.map((f) => [f.path, f.diff, f.truncated]),
      [
        ['a', '@@ 1\n+aaaa\n', true],
        ['b', '@@ 2\n+cc\n', false],
        ['c', null, true],
      ],
    );
    assert.equal(files.offered, 4);
    assert.deepEqual(files.notes(10), [
      'showing 3 of 10 changed files',
      'the diffs of 2 files were cut to the size limit',
    ]);
  });

  test('a diff without its last line end gets one (GitHub leaves it out)', () => {
    const files = new FileCollector(DEFAULT_CHANGE_LIMITS);
    files.add(file('a', '@@ -1 +1 @@\n-a\n+b'));
    assert.equal(files.files[0]?.diff, '@@ -1 +1 @@\n-a\n+b\n');
  });
});

test('cursors are plain JSON; anything else stored is refused', () => {
  const cursor = startCursor(new Date('2025-03-01T10:00:00Z'));
  assert.deepEqual(parseCursor(JSON.parse(JSON.stringify(cursor))), cursor);
  for (const bad of [
    null,
    'x',
    {},
    { mergedAt: 'soon', numbers: [], sha: null },
    { ...cursor, numbers: ['1'] },
    { ...cursor, sha: '--exec=x' },
  ]) {
    assert.equal(parseCursor(bad), undefined, JSON.stringify(bad));
  }
});

describe('listMergedChanges (the one listing, with a host of arrays)', () => {
  const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();
  const pull = (
    number: number,
    mergedMinute: number | null,
    updatedMinute = mergedMinute ?? 0,
  ): ListedPullRequest => ({
    updatedAt: at(updatedMinute),
    merged:
      mergedMinute === null
        ? null
        : {
            number,
            title: `#${number}`,
            headRef: `b${number}`,
            headSha: null,
            mergeCommitSha: `m${number}`,
            mergedAt: at(mergedMinute),
            labels: [],
            url: null,
          },
  });
  const source = (pulls: ListedPullRequest[], commits: BranchCommit[] = [], pagesComplete = true) => ({
    async eachPullRequest(visit: (p: ListedPullRequest) => boolean) {
      const sorted = [...pulls].sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt));
      for (const p of sorted) if (!visit(p)) return { complete: true };
      return { complete: pagesComplete };
    },
    async eachCommit(visit: (c: BranchCommit) => boolean) {
      for (const c of commits) if (!visit(c)) break;
      return { complete: true };
    },
    partOfMergedPullRequest: async () => false,
  });

  test('merges at the cursor’s very second are told apart by number', async () => {
    const since = { mergedAt: at(10), numbers: [1], sha: null };
    const listed = await listMergedChanges(
      { ref: 'main', since },
      source([pull(1, 10), pull(2, 10), pull(3, 9, 12)]),
    );
    assert.deepEqual(
      listed.merged.map((m) => m.number),
      [2],
    );
    assert.deepEqual(listed.cursor.numbers, [1, 2]);
  });

  test('the host’s list is read only down to the first pull request updated before the cursor', async () => {
    const pulls = [pull(1, 30), ...Array.from({ length: 500 }, (_, i) => pull(100 + i, 1, 2))];
    const seen: number[] = [];
    const counting = source(pulls);
    const listed = await listMergedChanges(
      { ref: 'main', since: startCursor(new Date(at(10))) },
      {
        ...counting,
        eachPullRequest: (visit) =>
          counting.eachPullRequest((p) => {
            seen.push(p.merged?.number ?? 0);
            return visit(p);
          }),
      },
    );
    assert.deepEqual(
      listed.merged.map((m) => m.number),
      [1],
    );
    assert.deepEqual(seen, [1, 100], 'one past the cursor, then it stops');
  });

  test('a list longer than the host’s pages: what might be missing is skipped, and said so', async () => {
    const listed = await listMergedChanges(
      { ref: 'main', since: startCursor(new Date(at(0))) },
      source([pull(1, 5, 50), pull(2, 40), pull(3, 45)], [], false),
    );
    assert.deepEqual(
      listed.merged.map((m) => m.number),
      [2, 3],
    );
    assert.match(listed.notes.join('\n'), /merges before .* were not listed/);
  });
});
