// docwright's own docs pass its own verification (docs/verification.mdx): every page of docs/,
// taken as if a run had written it, has no finding at level error from the built-in checks,
// style and spelling — so that a pull request docwright opens on its own docs passes the first time.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { checksFor } from '../../src/agent/verify/checks.ts';
import { checkoutTree, overlayTree } from '../../src/agent/verify/tree.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

test('every page of docs/ passes the checks a run applies', async () => {
  const head = checkoutTree(ROOT);
  const pages = (await head.listFiles('docs')).filter((f) => /\.(mdx?|json)$/.test(f));
  assert.ok(pages.length > 30, `docs/ was read (${pages.length} files)`);
  // As if the run had created every page: every line is the run's, and nothing is preexisting.
  const base = overlayTree(head, new Map(pages.map((f) => [f, null])));
  const changes = { changed: pages, deleted: [], moved: [] };
  const signal = AbortSignal.timeout(120_000);
  const errors: string[] = [];
  const ran: string[] = [];
  for (const check of checksFor({ commands: [] })) {
    const outcome = await check.run({
      tree: head,
      other: base,
      state: 'head',
      docsDir: 'docs',
      changes,
      signal,
    });
    if (outcome.skipped === undefined) ran.push(check.name);
    for (const f of outcome.findings)
      if (f.level === 'error') errors.push(`${f.path}:${f.line ?? '-'} ${f.message} (${f.rule})`);
  }
  assert.deepEqual(ran.slice(0, 3), ['pages', 'navigation', 'links']);
  assert.deepEqual(errors, []);
});
