import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { detectSite } from '../../src/agent/site/detect.ts';
import { evaluateCheck, type JobResult } from '../../src/eval/checks.ts';
import type { Check } from '../../src/eval/task.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const NAV = (pages: string[]) =>
  JSON.stringify({ name: 'D', navigation: { groups: [{ group: 'G', pages }] } });

/** A docs tree as a job left it, and what its diff changed and added. */
async function result(
  before: Record<string, string>,
  after: Record<string, string | null>,
  addedLines = '',
): Promise<JobResult> {
  const root = temporaryDirectory('docwright-checks-');
  const put = (files: Record<string, string | null>) => {
    for (const [name, content] of Object.entries(files)) {
      const file = path.join(root, name);
      if (content === null) rmSync(file, { force: true });
      else {
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, content);
      }
    }
  };
  put(before);
  const baseSite = await detectSite(root, '.');
  put(after);
  const files = Object.keys({ ...before, ...after }).filter((f) => after[f] !== null);
  const changed = Object.keys(after);
  const deleted = changed.filter((f) => after[f] === null);
  return { root, docsDir: '.', files, changed, deleted, addedLines, baseSite };
}

const check = (c: Partial<Check> & Pick<Check, 'type'>): Check => ({
  priority: 'P1',
  scoring: 'requirement',
  ...c,
});
const passed = async (c: Partial<Check> & Pick<Check, 'type'>, r: JobResult) =>
  (await evaluateCheck(check(c), r)).passed;

const BASE = {
  'docs.json': NAV(['index', 'api/get', 'api/list']),
  'index.mdx': '# Home\n\nSlugs are case-sensitive.\n',
  'api/get.mdx': '# Get\n',
  'api/list.mdx': '# List\n',
};

describe('the checks of docs/evaluation.mdx', () => {
  test('changed / unchanged: any file, or the files a path or glob names', async () => {
    const r = await result(BASE, { 'api/get.mdx': '# Get a link\n' }, '# Get a link');
    assert.equal(await passed({ type: 'changed' }, r), true);
    assert.equal(await passed({ type: 'changed', path: 'api/get.mdx' }, r), true);
    assert.equal(await passed({ type: 'changed', path: 'api/*.mdx' }, r), true);
    assert.equal(await passed({ type: 'changed', path: '{index,docs}.*' }, r), false);
    assert.equal(await passed({ type: 'unchanged', path: 'index.mdx' }, r), true);
    assert.equal(await passed({ type: 'unchanged', path: 'api/{get,list}.mdx' }, r), false);
    assert.equal(await passed({ type: 'unchanged' }, r), false);
    const none = await result(BASE, {});
    assert.equal(await passed({ type: 'unchanged' }, none), true);
    assert.equal(await passed({ type: 'changed' }, none), false);
  });

  test('contains / not-contains: in the files a path names at the head, or in the lines the diff added', async () => {
    const r = await result(
      BASE,
      { 'index.mdx': '# Home\n\nSlugs are case-insensitive.\n' },
      'Slugs are case-insensitive.',
    );
    assert.equal(await passed({ type: 'contains', path: 'index.mdx', pattern: 'case-insensitive' }, r), true);
    assert.equal(
      await passed({ type: 'contains', path: 'index.mdx', pattern: '(?i)^SLUGS ARE' }, r),
      true,
      'RE2, multi-line',
    );
    assert.equal(await passed({ type: 'contains', path: 'api/*.mdx', pattern: 'case' }, r), false);
    assert.equal(
      await passed({ type: 'contains', path: 'nowhere.mdx', pattern: 'x' }, r),
      false,
      'no file: not contained',
    );
    assert.equal(await passed({ type: 'not-contains', path: 'nowhere.mdx', pattern: 'x' }, r), true);
    assert.equal(
      await passed({ type: 'not-contains', path: '**/*.mdx', pattern: 'are case-sensitive' }, r),
      true,
    );
    assert.equal(await passed({ type: 'contains', pattern: 'insensitive' }, r), true, 'the added lines');
    assert.equal(
      await passed({ type: 'contains', pattern: '# Home' }, r),
      false,
      'an unchanged line is not an added one',
    );
    assert.equal(await passed({ type: 'not-contains', pattern: 'insensitive' }, r), false);
    const detail = (await evaluateCheck(check({ type: 'contains', path: 'api/*.mdx', pattern: 'case' }), r))
      .detail;
    assert.equal(detail, 'none of the 2 files matching api/*.mdx matches /case/');
  });

  test("valid: the site at the head passes docwright's validator (pages compile, the navigation names existing pages)", async () => {
    const good = await result(BASE, { 'api/get.mdx': '# Get\n\nReturns a link.\n' });
    assert.equal(await passed({ type: 'valid' }, good), true);
    const brokenMdx = await result(BASE, { 'api/get.mdx': '# Get\n\n<Note>unclosed\n' });
    const outcome = await evaluateCheck(check({ type: 'valid' }), brokenMdx);
    assert.equal(outcome.passed, false);
    assert.match(outcome.detail, /api\/get\.mdx.*MDX does not compile/);
    const deletedButNavigated = await result(BASE, { 'api/list.mdx': null });
    assert.match(
      (await evaluateCheck(check({ type: 'valid' }), deletedButNavigated)).detail,
      /navigation names "api\/list".*\(api\/list\.mdx was deleted or moved in this run/,
    );
    const orphan = await result(BASE, { 'api/new.mdx': '# New\n' });
    assert.equal(await passed({ type: 'valid' }, orphan), false, 'a new page must be in the navigation');
    assert.equal(
      await passed({ type: 'valid', path: 'index.mdx' }, brokenMdx),
      true,
      'path limits the files validated',
    );
  });
});
