import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  cleanAnchor,
  mintlifySlug,
  pageAnchors,
  plainHeadingsHave,
} from '../../src/agent/verify/mintlify-anchors.ts';
import { parsePage } from '../../src/agent/verify/mintlify-mdx.ts';

function anchorsOf(text: string): Set<string> {
  const page = parsePage(text);
  assert.ok(page.tree, `parses: ${page.problems.map((p) => p.message).join('; ')}`);
  return pageAnchors(page.tree, page.customIds);
}

/** Pages whose headings a line scan could misread; the scan must never accept what the parse has not. */
const PAGES = [
  '---\ntitle: A\n# not a heading: yaml\n---\n\n## Getting Started\n\n## Step 1: Install\n',
  '## Repeated\n\n## Repeated\n\n## Repeated 2\n',
  '## Repeated 2\n\n## Repeated\n\n## Repeated\n',
  'Setext heading\n==============\n\n## Setext heading\n',
  'Paragraph\n---\n\n## Paragraph\n',
  '```md\n## Inside a fence\n```\n\n## Outside\n',
  '> ## Quoted\n\n## Quoted\n',
  '- ## Listed\n\n## Listed\n',
  '<h2 id="custom">Plain</h2>\n\n## Plain\n',
  '{/* ## Commented */}\n\n## Commented\n',
  '## Has `code`\n\n## Has code\n',
  "## Tom &amp; Jerry\n\n## What's new?\n",
  '    ## Indented in MDX\n\n## Indented in MDX\n',
  '##### Five\n\n## Five\n',
  '## Closing hashes ##\n',
  '{/*\n## Only in a comment\n*/}\n\nText.\n',
  'export const text = `\n## Only in a string\n`;\n\nText.\n',
  '```\n## Only in a fence\n```\n',
  '---\ntitle: x\n## only-in-frontmatter\n---\n\nText.\n',
];

describe('anchors read off plain headings without a parse', () => {
  test('never accepts an anchor the parsed page does not have', () => {
    for (const text of PAGES) {
      const real = anchorsOf(text);
      const candidates = new Set<string>(real);
      for (const line of text.split('\n')) {
        const m = /#{1,6}\s+(.*)/.exec(line);
        if (m) for (const n of ['', '-2', '-3', '-2-2']) candidates.add(cleanAnchor(mintlifySlug(m[1]!)) + n);
      }
      for (const anchor of candidates) {
        if (plainHeadingsHave(text, anchor))
          assert.ok(real.has(anchor), `${JSON.stringify(text)}: accepted "#${anchor}"`);
      }
    }
  });

  test('finds the anchors of a page of plain headings, so that page is not parsed', () => {
    const text =
      '---\ntitle: Guide\n---\n\n## Getting Started\n\nText with [a link](#x).\n\n---\n\n### Step 1: Install\n';
    assert.equal(plainHeadingsHave(text, 'getting-started'), true);
    assert.equal(plainHeadingsHave(text, 'step-1-install'), true);
    assert.equal(plainHeadingsHave(text, 'getting-startd'), false);
  });
});
