import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mintlifyLinksCheck } from '../../src/agent/verify/mintlify-links.ts';
import { page, runBoth, scenario } from '../helpers/verify-trees.ts';

const SITE = {
  'docs.json': JSON.stringify({
    theme: 'mint',
    name: 'T',
    colors: { primary: '#000000' },
    navigation: { groups: [{ group: 'A', pages: ['index', { $ref: './nav/guides.json' }] }] },
    redirects: [{ source: '/old-page', destination: '/guides/setup' }],
  }),
  'nav/guides.json': JSON.stringify({ group: 'Guides', pages: ['guides/setup', 'guides/other'] }),
  'images/logo.png': 'png',
  'index.mdx': page('Home'),
  'guides/other.mdx': page('Other', '# Links\n\nNothing yet.'),
  'guides/notes.md': page(
    'Notes',
    '## Notes Heading\n\n<Steps titleSize="h2">\n<Step title="First step">\nDo it.\n</Step>\n</Steps>\n\n<Steps>\n<Step title="Small step">\nDo it.\n</Step>\n</Steps>',
  ),
  'snippets/a.mdx': 'x\n',
  'guides/setup.mdx': page(
    'Setup',
    [
      '## Getting Started',
      "## What's new?",
      '## API & SDK',
      '## Café au lait',
      '## Repeated',
      '## Repeated',
      '##### Deep heading',
      '## Custom one {#my-custom}',
      '<Accordion title="Install steps">\n## Inside accordion\n</Accordion>',
      '<Accordion title="Other" id="acc-id">\ntext\n</Accordion>',
      '<div id="raw-div">x</div>',
      '<Tip id="tip-id">x</Tip>',
      '<Update label="v1.2 release" description="x">\ntext\n</Update>',
      '## `code` heading',
    ].join('\n\n'),
  ),
};

/**
 * Links and whether `mint broken-links --check-anchors` (the `mint` package from npm, November
 * 2026) reports them on SITE: each was run through the real tool on this tree (docs.json must be
 * valid for mint to read its redirects). `true` = reported broken.
 */
const MINT_VERDICTS: [link: string, broken: boolean][] = [
  ['/guides/setup#getting-started', false],
  ['/guides/setup#whats-new', false],
  ['/guides/setup#what-s-new', true],
  ['/guides/setup#api-&-sdk', false],
  ['/guides/setup#api--sdk', true],
  ['/guides/setup#api-sdk', true],
  ['/guides/setup#café-au-lait', false],
  ['/guides/setup#cafe-au-lait', true],
  ['/guides/setup#repeated', false],
  ['/guides/setup#repeated-1', true],
  ['/guides/setup#repeated-2', false],
  ['/guides/setup#deep-heading', true],
  ['/guides/setup#my-custom', false],
  ['/guides/setup#custom-one', true],
  ['/guides/setup#inside-accordion', false],
  ['/guides/setup#install-steps', false],
  ['/guides/setup#acc-id', false],
  ['/guides/setup#raw-div', true],
  ['/guides/setup#tip-id', true],
  ['/guides/setup#v1-2-release', false],
  ['/guides/setup#v12-release', true],
  ['/guides/setup#code-heading', false],
  ['/guides/setp', true],
  ['./setup', false],
  ['../guides/setup#nope', true],
  ['/old-page', false],
  ['/images/logo.png', false],
  ['/images/logo', false],
  ['/images/nothing.png', true],
  ['#links', false],
  ['#nolink', true],
  ['guides/setup', false],
  ['/guides', false],
  ['/guides/setup.mdx', false],
  ['/guides/setup/', false],
  ['/guides/setup?x=1', false],
  ['/guides/setup?x=1#getting-started', false],
  ['/Guides/Setup', true],
  ['/guides/setup#Getting-Started', true],
  ['../index', false],
  ['/', false],
  ['/guides/notes', false],
  ['/guides/notes.md#notes-heading', false],
  ['/guides/notes#first-step', false],
  ['/guides/notes#small-step', true],
  ['/guides/setup#getting%20started', true],
  ['/images/logo.PNG', false],
  ['/guides/setup#', false],
  ['/snippets', false],
  ['/docs.json', false],
];

describe('links and anchors, as mint broken-links --check-anchors judges them', () => {
  test('every verdict of the real tool on the same tree', async () => {
    const body = MINT_VERDICTS.map(([link], i) => `[l${i}](${link})`).join('\n\n');
    const s = await scenario(SITE, { write: { 'guides/other.mdx': page('Other', `# Links\n\n${body}`) } });
    const { introduced } = await runBoth(mintlifyLinksCheck, s);
    const reported = new Set(introduced.map((f) => /^link to "([^"]+)"/.exec(f.message)![1]));
    const wrong = MINT_VERDICTS.filter(([link, broken]) => reported.has(link) !== broken);
    assert.deepEqual(wrong, [], 'links judged otherwise than mint judges them');
  });

  test('components and HTML elements: <Card href>, <a href>, <img src> block, other components warn; code and external URLs are not links', async () => {
    const body = [
      '<Card title="c" href="/guides/missing-card">x</Card>',
      '<a href="/guides/missing-a">x</a>',
      '<img src="/images/missing.png" />',
      '<Card title="ok" href="/guides/setup#getting-started">x</Card>',
      '`[code](/not-checked)`',
      '```md\n[block](/not-checked-either)\n```',
      '[ext](https://example.com/x) [mail](mailto:a@b.c) [tel](tel:123)',
      '<Tooltip tip="t" href="/guides/missing-tooltip">x</Tooltip>',
      '[def]: /guides/missing-definition',
    ].join('\n\n');
    const s = await scenario(SITE, { write: { 'guides/other.mdx': page('Other', body) } });
    const { introduced } = await runBoth(mintlifyLinksCheck, s);
    assert.deepEqual(
      introduced.map((f) => [f.line, /^link to "([^"]+)"/.exec(f.message)![1], f.level]),
      [
        [5, '/guides/missing-card', 'error'],
        [7, '/guides/missing-a', 'error'],
        [9, '/images/missing.png', 'error'],
        // mint broken-links does not look at these: shown, never blocking.
        [21, '/guides/missing-tooltip', 'warning'],
        [23, '/guides/missing-definition', 'warning'],
      ],
    );
  });

  test('a broken link says how to fix it; a broken anchor on another page names the anchors that are there', async () => {
    const s = await scenario(SITE, {
      write: { 'guides/other.mdx': page('Other', '[a](/guides/setp)\n\n[b](/guides/setup#getting-startd)') },
    });
    const { introduced } = await runBoth(mintlifyLinksCheck, s);
    assert.equal(
      introduced[0]!.message,
      'link to "/guides/setp" reaches no page or file: did you mean "/guides/setup"?',
    );
    assert.equal(
      introduced[1]!.message,
      'link to "/guides/setup#getting-startd" names the anchor "#getting-startd", which "/guides/setup" does not have: did you mean "#getting-started"?',
    );
    assert.equal(introduced[1]!.line, 7);
  });

  test('a broken image path is mended with a file of its kind, not a page', async () => {
    const s = await scenario(
      { ...SITE, 'images/logo-dark.png': 'png', 'guides/logo.mdx': page('Logo') },
      { write: { 'guides/other.mdx': page('Other', '![x](/images/logo-drak.png)') } },
    );
    const { introduced } = await runBoth(mintlifyLinksCheck, s);
    assert.equal(
      introduced[0]!.message,
      'link to "/images/logo-drak.png" reaches no page or file: did you mean "/images/logo-dark.png"?',
    );
  });

  test('a page that links to a page the run moved is checked though the run did not touch it', async () => {
    const s = await scenario(
      {
        ...SITE,
        'guides/other.mdx': page('Other', 'See [setup](/guides/setup) and [start](./setup#getting-started).'),
      },
      { move: [['guides/setup.mdx', 'guides/install.mdx']] },
    );
    const { introduced } = await runBoth(mintlifyLinksCheck, s);
    assert.equal(introduced.length, 2);
    assert.equal(introduced[0]!.path, 'guides/other.mdx');
    assert.match(introduced[0]!.message, /this run moved that page; link to "\/guides\/install" instead/);
    assert.match(introduced[1]!.message, /link to "\/guides\/install#getting-started" instead/);
  });

  test('a page whose links only resemble the moved page is not brought into scope', async () => {
    const s = await scenario(
      {
        ...SITE,
        'guides/other.mdx': page('Other', 'See [setup](/guides/setup).'),
        'guides/setup-advanced.mdx': page('Advanced'),
        'index.mdx': page('Home', '[adv](/guides/setup-advanced) and [broken](/nowhere)'),
      },
      { move: [['guides/setup.mdx', 'guides/install.mdx']] },
    );
    const { head } = await runBoth(mintlifyLinksCheck, s);
    assert.deepEqual(
      head.map((f) => f.path),
      ['guides/other.mdx'],
    );
  });

  test('a broken link already in the base is found on both states (preexisting), a new one only on head', async () => {
    const s = await scenario(
      { ...SITE, 'guides/other.mdx': page('Other', '[old](/nowhere)') },
      {
        write: { 'guides/other.mdx': page('Other', 'New line.\n\n[old](/nowhere)\n\n[new](/also-nowhere)') },
      },
    );
    const { head, base, introduced } = await runBoth(mintlifyLinksCheck, s);
    assert.equal(head.length, 2);
    assert.equal(base.length, 1);
    assert.notEqual(head[0]!.line, base[0]!.line, 'the line moved, the finding is the same');
    assert.deepEqual(
      introduced.map((f) => f.message),
      ['link to "/also-nowhere" reaches no page or file: fix the path or remove the link'],
    );
  });

  test('pages the run did not change and that do not link to moved pages are not read for links', async () => {
    const s = await scenario(
      { ...SITE, 'guides/other.mdx': page('Other', '[old](/nowhere)') },
      { write: { 'index.mdx': page('Home', 'Hi') } },
    );
    const { head } = await runBoth(mintlifyLinksCheck, s);
    assert.deepEqual(head, []);
  });
});
