import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileGlob, GlobSyntaxError, globToRe2 } from '../src/glob.ts';
import { MATCHING } from './fixtures/matching.ts';
import { offThread } from './helpers/off-thread.ts';

/** [glob, options, paths that match, paths that do not] */
const table: [string, { dot?: boolean }, string[], string[]][] = [
  ['**/*.md', {}, ['a.md', 'docs/a.md', 'docs/x/y.md'], ['.hidden/a.md', 'docs/.a.md', 'a.mdx']],
  ['**/*.md', { dot: true }, ['.hidden/a.md', 'docs/.a.md'], ['a.mdx']],
  ['docs.json', {}, ['docs.json'], ['x/docs.json', 'docsXjson']],
  ['.vitepress/config.*', {}, ['.vitepress/config.ts'], ['.vitepress/config', 'vitepress/config.ts']],
  ['docs/**', {}, ['docs', 'docs/a', 'docs/a/b'], ['docsx', 'x/docs/a']],
  ['guides/*', {}, ['guides/z.md'], ['guides/a/b', 'guides']],
  ['*.{md,mdx}', {}, ['a.md', 'a.mdx'], ['a.txt', 'd/a.md']],
  ['a/**/b', {}, ['a/b', 'a/x/b', 'a/x/y/b'], ['a/bb', 'b']],
  ['[a-c]?.txt', {}, ['ab.txt', 'cz.txt'], ['db.txt', 'a.txt']],
  ['[!a]*', {}, ['b', 'bcd'], ['a', 'abc', '.x', 'b/c']],
  ['@(foo|bar).md', {}, ['foo.md', 'bar.md'], ['baz.md', 'foobar.md']],
  ['+(ab).md', {}, ['ab.md', 'abab.md'], ['.md', 'a.md']],
  ['**', {}, ['a', 'a/b'], ['.a/b']],
  ['**', { dot: true }, ['a', 'a/b', '.a/b'], []],
  ['{a}', {}, ['{a}'], ['a']],
  ['\\*.md', {}, ['*.md'], ['a.md']],
  ['[[:digit:]]*', {}, ['1a', '9'], ['a1']],
  ['{src,docs/{a,b}}/*.md', {}, ['src/x.md', 'docs/a/x.md', 'docs/b/y.md'], ['docs/c/x.md']],
];

describe('globs, matched in linear time', () => {
  test('the usual glob semantics', () => {
    for (const [glob, options, yes, no] of table) {
      const match = compileGlob(glob, options);
      for (const p of yes) assert.ok(match(p), `${glob} ${JSON.stringify(options)} should match ${p}`);
      for (const p of no) assert.ok(!match(p), `${glob} ${JSON.stringify(options)} should not match ${p}`);
    }
  });

  test('patterns that make backtracking matchers take exponential time match at once', async () => {
    const path = `${'a'.repeat(5_000)}x.txt`;
    // Seconds to years for picomatch on these, here milliseconds: matched on a thread of their own,
    // so that a regression fails this test (after a minute) instead of hanging the file.
    assert.deepEqual(
      await offThread(MATCHING, 'globMatches', ['**/*(a*)*(a*)*(a*)*(a*)*(a*)c', { dot: true }, [path]]),
      [false],
    );
    assert.deepEqual(await offThread(MATCHING, 'globMatches', ['*(a|aa|aaa)*(a|aa)+(a)x.txt', {}, [path]]), [
      true,
    ]);
  });

  test('what cannot be matched in linear time, or is malformed, is refused with the reason', () => {
    const refused: [string, RegExp][] = [
      ['!(a).md', /negated patterns "!\(…\)" are not supported/],
      ['a\\', /ends with a lone "\\"/],
      ['[z-a]', /bad character class/],
      ['[[:nope:]]', /unknown character class/],
      [`${'{'.repeat(30)}a,b${'}'.repeat(30)}`, /nested more than 20 levels deep/],
      ['x'.repeat(1_001), /longer than 1000 characters/],
      ['@(a|b', /is never closed/],
    ];
    for (const [glob, reason] of refused) {
      assert.throws(
        () => globToRe2(glob),
        (error: unknown) => error instanceof GlobSyntaxError && reason.test(error.message),
        glob,
      );
    }
  });
});
