import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { detectSite } from '../../src/agent/site/detect.ts';
import { readMkdocsConfig } from '../../src/agent/site/mkdocs-config.ts';
import { siteMap } from '../../src/agent/site/site-map.ts';
import { readRst } from '../../src/agent/site/sphinx-markup.ts';
import { readMyst } from '../../src/agent/site/sphinx-myst.ts';
import { mkdocsChecks } from '../../src/agent/verify/mkdocs-checks.ts';
import { pythonMarkdownSlug, readMkdocsPage } from '../../src/agent/verify/mkdocs-markdown.ts';
import type { Check } from '../../src/agent/verify/types.ts';
import { docsRun, findingsOf, writeFiles } from '../helpers/docs-run.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const [navigation, links] = mkdocsChecks() as [Check, Check];

const MKDOCS_YML = [
  'site_name: Demo',
  'markdown_extensions:',
  '  - attr_list',
  '  - toc:',
  '      permalink: true',
  'not_in_nav: |',
  '  /drafts/',
  'nav:',
  '  - Home: index.md',
  '  - Guide:',
  '      - guide/install.md',
  '      - Usage: guide/use.md',
  '  - Blog: https://example.com/blog',
  '  - Plugins: !include ./plugins/mkdocs.yml',
  "  - Quoted: '!include ./other/mkdocs.yml'",
  '',
].join('\n');

const SITE: Record<string, string> = {
  'mkdocs.yml': MKDOCS_YML,
  'docs/index.md': '---\ntitle: Home\n---\n# Welcome\n\nSee [install](guide/install.md#requirements).\n',
  'docs/guide/install.md':
    '# Install\n\n## Requirements\n\n## Step 1: Download & unpack {#download}\n\n<a id="legacy"></a>\n',
  'docs/guide/use.md': '# Use\n\n## Options\n\n## Options\n',
  'docs/img/logo.png': 'png',
};

describe('MkDocs', () => {
  test('the site map: nested nav, titles, external links and !include left out, docs_dir', async () => {
    const root = temporaryDirectory('docwright-mkdocs-');
    await writeFiles(root, SITE);
    const info = await detectSite(root, '.');
    assert.equal(info.configError, null);
    assert.deepEqual(
      info.navPages.map((p) => [p.ref, p.file]),
      [
        ['index.md', 'docs/index.md'],
        ['guide/install.md', 'docs/guide/install.md'],
        ['guide/use.md', 'docs/guide/use.md'],
      ],
    );
    assert.deepEqual(info.missing, []);
    const map = siteMap(info);
    assert.match(map, /- Guide: guide\/install\.md, guide\/use\.md/);
    assert.match(map, /!include \(\.\/plugins\/mkdocs\.yml, \.\/other\/mkdocs\.yml\)/);
    assert.doesNotMatch(map, /MISSING/);

    const bare = temporaryDirectory('docwright-mkdocs-');
    await writeFiles(bare, {
      'mkdocs.yml': 'site_name: T\ndocs_dir: content\n',
      'content/a.md': '# A\n',
      'content/b/c.md': '# C\n',
    });
    const noNav = await detectSite(bare, '.');
    assert.equal(noNav.navigation, null);
    assert.deepEqual(noNav.pages, ['content/a.md', 'content/b/c.md']);
    const bareMap = siteMap(noNav);
    assert.match(bareMap, /no nav: MkDocs puts every page under content\/ in the navigation by itself/);
    assert.doesNotMatch(bareMap, /Keep the nav in sync/);
  });

  test('mkdocs.yml: markdown_extensions as a list or as a map, a custom slugify', () => {
    assert.equal(readMkdocsConfig('markdown_extensions:\n  - toc\n  - attr_list\n', 'm').attrList, true);
    const map = readMkdocsConfig(
      'markdown_extensions:\n  attr_list: null\n  toc:\n    permalink: true\n',
      'm',
    );
    assert.deepEqual([map.attrList, map.customSlugify], [true, false]);
    const slugify =
      'markdown_extensions:\n  - toc:\n      slugify: !!python/object/apply:pymdownx.slugs.slugify\n';
    assert.deepEqual(
      [readMkdocsConfig(slugify, 'm').attrList, readMkdocsConfig(slugify, 'm').customSlugify],
      [false, true],
    );
  });

  test('heading ids as Python-Markdown makes them', () => {
    assert.equal(pythonMarkdownSlug('Hello, World! Version 2.0'), 'hello-world-version-20');
    assert.equal(pythonMarkdownSlug('Café & Crème -- brûlée'), 'cafe-creme-brulee');
    assert.equal(pythonMarkdownSlug('  snake_case stays  '), 'snake_case-stays');
    const page = readMkdocsPage(
      '# A `code` *title*\n\n# Dup\n\n# Dup\n\n# Dup\n\n# !!!\n\n## Custom {#mine}\n\nText\n{: #para }\n',
      {
        attrList: true,
      },
    );
    assert.deepEqual([...page.anchors].sort(), [
      '_1',
      'a-code-title',
      'dup',
      'dup_1',
      'dup_2',
      'mine',
      'para',
    ]);
    const nested = readMkdocsPage(
      '!!! note "Read"\n\n    ## Inside\n\n    === "Tab"\n\n        See [there](x.md).\n\n    code:\n\n        [not](a-link.md)\n',
      { attrList: false },
    );
    assert.deepEqual([...nested.anchors], ['inside']);
    assert.deepEqual(
      nested.links.map((l) => `${l.line} ${l.url}`),
      ['7 x.md'],
    );
    const markup = readMkdocsPage(
      [
        '## snake_case_name and __bold__ _em_',
        '',
        '## [Linked](x.md) &amp; <b>tag</b> \\*star\\*',
        '',
        'Setext title',
        '------------',
        '',
        'A [link that',
        'wraps](wrapped.md), `[in code](no.md)`, ![img](pic.png "title").',
        '',
        '- item',
        '',
        '    [continued](list.md)',
        '',
        '```md',
        '## Not a heading',
        '[not](fenced.md)',
        '```',
        '',
        '[def]: <defined.md>',
        '<div id="box" name="named"></div>',
      ].join('\n'),
      { attrList: false },
    );
    assert.deepEqual(
      [...markup.anchors],
      ['snake_case_name-and-bold-em', 'linked-tag-star', 'setext-title', 'box', 'named'],
    );
    assert.deepEqual(
      markup.links.map((l) => `${l.line} ${l.url}`),
      ['3 x.md', '8 wrapped.md', '9 pic.png', '13 list.md', '20 defined.md'],
    );
    const plain = readMkdocsPage('## Custom {#mine}\n', { attrList: false });
    assert.deepEqual([...plain.anchors], ['custom-mine']);
  });

  test('pages of pathological markup are read in linear time (MkDocs, MyST and reStructuredText)', () => {
    const n = 300_000;
    const pages = [
      '['.repeat(n),
      '[a'.repeat(n / 2),
      '](('.repeat(n / 3),
      '<a id="x" '.repeat(n / 10),
      'T <'.repeat(n / 3),
      `# a${' #'.repeat(n / 2)}x`,
      `# ${' '.repeat(n)}x`,
      ':doc:`a'.repeat(n / 7),
    ];
    const start = performance.now();
    for (const page of pages) {
      readMkdocsPage(page, { attrList: true });
      readMyst(page);
      readRst(page);
    }
    // Quadratic patterns took minutes on these; linear reading takes well under a second.
    assert.ok(performance.now() - start < 5_000, `${Math.round(performance.now() - start)} ms`);
  });

  test('a new page in the nav with good links and anchors passes; base too', async () => {
    const run = await docsRun(SITE, {
      'docs/guide/faq.md': [
        '# FAQ',
        '',
        '[Install](install.md), [needs](install.md#requirements), [download](./install.md#download),',
        '[legacy](install.md#legacy), [second options](use.md#options_1), [home](../index.md#welcome),',
        '[here](#faq), [folder](../guide/), ![logo](../img/logo.png), [out](https://example.com/x.md#nope),',
        '[abs](/anything), [ref][r]',
        '',
        '[r]: use.md#options',
        '',
      ].join('\n'),
      'mkdocs.yml': MKDOCS_YML.replace(
        '      - Usage: guide/use.md',
        '      - Usage: guide/use.md\n      - guide/faq.md',
      ),
    });
    for (const check of [navigation, links]) {
      assert.deepEqual((await findingsOf(check, run, 'head')).lines, [], check.name);
      assert.deepEqual((await findingsOf(check, run, 'base')).lines, [], check.name);
    }
  });

  test('a page outside the nav, a nav entry with no page, a broken link and a broken anchor are caught', async () => {
    const run = await docsRun(SITE, {
      'docs/guide/faq.md':
        '# FAQ\n\nSee [install](instal.md) and [needs](install.md#requirement).\n\nAnd [same](#nothing).\n',
      'docs/drafts/idea.md': '# Idea\n',
      'mkdocs.yml': MKDOCS_YML.replace('guide/use.md', 'guide/usage.md'),
    });
    const nav = await findingsOf(navigation, run, 'head');
    assert.deepEqual(
      nav.findings.map((f) => `${f.path}:${f.line} ${f.message.replace(/: .*$/, '')}`),
      [
        'mkdocs.yml:12 nav entry "guide/usage.md" names no page under docs/',
        'docs/guide/faq.md:null this page is not in the nav of mkdocs.yml',
      ],
    );
    assert.match(nav.findings[0]!.message, /did you mean "guide\/use\.md"\?/);
    const broken = await findingsOf(links, run, 'head');
    assert.deepEqual(
      broken.findings.map((f) => `${f.line} ${f.message.replace(/: .*$/, '')}`),
      [
        '3 link "instal.md" reaches no file',
        '3 anchor "#requirement" is no heading or id of docs/guide/install.md',
        '5 anchor "#nothing" is no heading or id of this page',
      ],
    );
    assert.match(broken.findings[0]!.message, /did you mean "install\.md"\?/);
    assert.match(broken.findings[1]!.message, /did you mean "#requirements"\?/);
    assert.deepEqual((await findingsOf(navigation, run, 'base')).lines, []);
    assert.deepEqual((await findingsOf(links, run, 'base')).lines, []);
  });

  test('a deleted page breaks links of pages the run did not touch; a finding already in the base is on both', async () => {
    const deleted = await docsRun(SITE, { 'docs/guide/install.md': null });
    assert.deepEqual(
      (await findingsOf(links, deleted, 'head')).findings.map((f) => `${f.path}:${f.line}`),
      ['docs/index.md:6'],
    );
    assert.deepEqual(
      (await findingsOf(navigation, deleted, 'head')).findings.map((f) => `${f.path}:${f.line}`),
      ['mkdocs.yml:11'],
    );
    assert.deepEqual((await findingsOf(links, deleted, 'base')).lines, []);

    const site = { ...SITE, 'docs/guide/use.md': '# Use\n\n[gone](gone.md)\n' };
    const run = await docsRun(site, { 'docs/guide/use.md': '# Use\n\nNew line.\n\n[gone](gone.md)\n' });
    const head = (await findingsOf(links, run, 'head')).findings;
    const base = (await findingsOf(links, run, 'base')).findings;
    assert.equal(head.length, 1);
    assert.deepEqual([head[0]!.line, base[0]!.line], [5, 3]);
    assert.deepEqual(
      [head[0]!.rule, head[0]!.path, head[0]!.message],
      [base[0]!.rule, base[0]!.path, base[0]!.message],
    );
  });

  test('without a nav every page is in the navigation; other sites are skipped', async () => {
    const run = await docsRun(
      { 'mkdocs.yml': 'site_name: T\n', 'docs/index.md': '# Home\n' },
      { 'docs/new.md': '# New\n\n[home](index.md)\n' },
    );
    assert.deepEqual((await findingsOf(navigation, run, 'head')).lines, []);
    assert.deepEqual((await findingsOf(links, run, 'head')).lines, []);
    const other = await docsRun({ 'docs.json': '{}', 'a.mdx': '# A\n' }, { 'a.mdx': '# B\n' });
    for (const check of [navigation, links]) {
      assert.match((await findingsOf(check, other, 'head')).skipped ?? '', /not an MkDocs site/);
    }
  });
});
