import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sphinxChecks } from '../../src/agent/verify/sphinx-checks.ts';
import type { Check } from '../../src/agent/verify/types.ts';
import { docsRun, findingsOf } from '../helpers/docs-run.ts';

const [navigation, links] = sphinxChecks() as [Check, Check];

const SITE: Record<string, string> = {
  'docs/conf.py': "project = 'Demo'\nextensions = ['myst_parser']\nexclude_patterns = ['_build', 'old']\n",
  'docs/index.rst': [
    'Demo',
    '====',
    '',
    '.. toctree::',
    '   :caption: Guides',
    '',
    '   guides/index',
    '   tutorial',
    '',
    '.. toctree::',
    '   :hidden:',
    '',
    '   hidden-page',
    '',
  ].join('\n'),
  'docs/guides/index.rst': [
    '.. _guides:',
    '',
    'Guides',
    '======',
    '',
    '.. toctree::',
    '   :glob:',
    '',
    '   topics/*',
    '',
  ].join('\n'),
  'docs/guides/topics/alpha.rst': 'Alpha\n=====\n\nSee :ref:`guides` and :doc:`../index`.\n',
  'docs/guides/topics/beta.md': '(beta-label)=\n# Beta\n\nSee {doc}`/tutorial`.\n',
  'docs/tutorial.md': '# Tutorial\n\n```{include} snippets/part.md\n```\n',
  'docs/snippets/part.md': 'shared\n',
  'docs/hidden-page.rst': 'Hidden\n======\n',
  'docs/old/page.rst': 'Old\n===\n',
  'docs/images/logo.png': 'png',
};

const page = (title: string, body = '') => `${title}\n${'='.repeat(title.length)}\n\n${body}\n`;

describe('Sphinx checks', () => {
  test('a new page added to a toctree, with good targets, passes both checks', async () => {
    const run = await docsRun(SITE, {
      'docs/guides/setup.rst': page(
        'Setup',
        'See :doc:`topics/alpha`, :doc:`/tutorial`, :ref:`guides`, :ref:`Beta <beta-label>`, :ref:`genindex`.\n\n.. image:: /images/logo.png\n\n.. literalinclude:: ../conf.py',
      ),
      'docs/guides/index.rst': `${SITE['docs/guides/index.rst']}\n.. toctree::\n\n   setup\n`,
    });
    for (const check of [navigation, links]) {
      assert.deepEqual((await findingsOf(check, run, 'head')).lines, [], check.name);
      assert.deepEqual((await findingsOf(check, run, 'base')).lines, [], check.name);
    }
  });

  test('an orphan page is a finding; a page in a hidden or glob toctree, or :orphan:, is not', async () => {
    const run = await docsRun(SITE, {
      'docs/guides/lonely.rst': page('Lonely'),
      'docs/guides/topics/gamma.rst': page('Gamma'),
      'docs/hidden-page.rst': page('Hidden', 'Edited.'),
      'docs/meant.rst': `:orphan:\n\n${page('Meant')}`,
      'docs/meant-md.md': '---\norphan: true\n---\n# Meant\n',
    });
    const head = await findingsOf(navigation, run, 'head');
    assert.equal(head.lines.length, 1, head.lines.join('\n'));
    assert.match(
      head.lines[0]!,
      /^navigation docs\/guides\/lonely\.rst:- this page is in no toctree.*add "lonely" to a toctree \(for example in docs\/guides\/index\.rst\)/,
    );
    assert.deepEqual((await findingsOf(navigation, run, 'base')).lines, []);
  });

  test('a toctree entry that names no page, an excluded page, or nothing by glob is a finding', async () => {
    const index = SITE['docs/index.rst']!.replace(
      '   tutorial\n',
      '   tutorail\n   old/page\n   nothing/*\n',
    );
    const run = await docsRun(SITE, {
      'docs/index.rst': index.replace(':caption: Guides', ':caption: Guides\n   :glob:'),
    });
    const head = await findingsOf(navigation, run, 'head');
    assert.deepEqual(
      head.findings.map((f) => [f.line, f.message.split(':')[0]]),
      [
        [9, 'toctree entry "tutorail" names no document'],
        [10, 'toctree entry "old/page" names a document that exclude_patterns in docs/conf.py excludes'],
        [11, 'toctree glob "nothing/*" matches no document'],
      ],
    );
    assert.match(head.findings[0]!.message, /did you mean "\/tutorial"\?/);
    // The page the fixed entry named is now in no toctree.
    assert.deepEqual((await findingsOf(navigation, run, 'base')).lines, []);
  });

  test('a broken :doc:, :ref: and include are findings of links; base stays clean', async () => {
    const run = await docsRun(SITE, {
      'docs/guides/topics/alpha.rst': page(
        'Alpha',
        'See :doc:`../indx`, :ref:`guidse` and {doc}`fine`.\n\n.. include:: missing.rst\n\n.. figure:: ../../images/logo.*\n',
      ),
      'docs/tutorial.md':
        '# Tutorial\n\nSee {doc}`guides/gone` and {ref}`nowhere`.\n\n```{image} pics/none.png\n```\n',
    });
    const head = await findingsOf(links, run, 'head');
    assert.deepEqual(
      head.findings.map(
        (f) =>
          `${f.path}:${f.line} ${f.message.replace(/(names no document|is no label of the site|\)): .*$/, '$1')}`,
      ),
      [
        'docs/guides/topics/alpha.rst:6 include "missing.rst" reaches no file (looked for docs/guides/topics/missing.rst)',
        'docs/guides/topics/alpha.rst:4 :doc: target "../indx" names no document',
        'docs/guides/topics/alpha.rst:4 :ref: target "guidse" is no label of the site',
        'docs/tutorial.md:5 image "pics/none.png" reaches no file (looked for docs/pics/none.png)',
        'docs/tutorial.md:3 :doc: target "guides/gone" names no document',
        'docs/tutorial.md:3 :ref: target "nowhere" is no label of the site',
      ],
    );
    assert.match(head.findings[1]!.message, /did you mean "\/guides\/index"\?/);
    assert.deepEqual((await findingsOf(links, run, 'base')).lines, []);
  });

  test('MyST Markdown links to source files must reach a document', async () => {
    const run = await docsRun(SITE, {
      'docs/tutorial.md': [
        '# Tutorial',
        '',
        '[ok](guides/index.rst), [ok too](</guides/topics/beta.md#beta>), [web](https://example.com/x.md),',
        '[file](snippets/part.txt), `[code](nope.md)`, [bad](guides/indx.rst#top).',
        '',
      ].join('\n'),
    });
    const head = await findingsOf(links, run, 'head');
    assert.deepEqual(
      head.findings.map((f) => `${f.line} ${f.message}`),
      [
        '4 link "guides/indx.rst#top" reaches no document: did you mean "/guides/index.rst"? links are relative to this page, with extension',
      ],
    );
  });

  test(':ref: to a section title counts only with sphinx.ext.autosectionlabel (and its document prefix)', async () => {
    const body = 'See :ref:`Beta` and :ref:`guides/topics/alpha:alpha`.';
    const plain = await docsRun(SITE, {
      'docs/tutorial.md': `# Tutorial\n\n{ref}\`Beta\`\n`,
      'docs/x.rst': `:orphan:\n\n${page('X', body)}`,
    });
    assert.equal((await findingsOf(links, plain, 'head')).findings.length, 3);
    const conf = "extensions = ['myst_parser', 'sphinx.ext.autosectionlabel']\n";
    const labelled = await docsRun(
      { ...SITE, 'docs/conf.py': conf },
      { 'docs/x.rst': `:orphan:\n\n${page('X', 'See :ref:`Beta`.')}` },
    );
    assert.deepEqual((await findingsOf(links, labelled, 'head')).lines, []);
    const prefixed = await docsRun(
      { ...SITE, 'docs/conf.py': `${conf}autosectionlabel_prefix_document = True\n` },
      { 'docs/x.rst': `:orphan:\n\n${page('X', body)}` },
    );
    assert.deepEqual(
      (await findingsOf(links, prefixed, 'head')).findings.map((f) => f.message.replace(/: use .*$/, '')),
      [':ref: target "Beta" is no label of the site'],
    );
  });

  test("labels of included files count; other projects' targets and a conf.py built by a function are not guessed at", async () => {
    const site = {
      ...SITE,
      'docs/includes/contact.txt': '.. _mailing-list:\n\nMailing list\n------------\n',
      'docs/_static/img/shot.png': 'png',
    };
    const page = (body: string) => `:orphan:\n\nX\n=\n\n${body}\n`;
    const body = [
      '.. include:: ../includes/contact.txt',
      '',
      'See :ref:`mailing-list`, :ref:`kombu:version-1`, :doc:`kombu:reference/index`.',
      '',
      '.. image:: ../../_static/img/shot.png',
      '',
      '.. literalinclude:: ../../_static/img/shot.png',
    ].join('\n');
    const edits = { 'docs/guides/x.rst': page(body) };
    const known = await findingsOf(links, await docsRun(site, edits), 'head');
    assert.deepEqual(
      known.findings.map((f) => `${f.line} ${f.message.replace(/(document|site|\)): .*$/, '$1')}`),
      [
        '12 literalinclude "../../_static/img/shot.png" reaches no file (looked for _static/img/shot.png)',
        '8 :ref: target "kombu:version-1" is no label of the site',
        '8 :doc: target "kombu:reference/index" names no document',
      ],
    );
    const intersphinx = { ...site, 'docs/conf.py': "extensions = ['sphinx.ext.intersphinx']\n" };
    assert.deepEqual(
      (await findingsOf(links, await docsRun(intersphinx, edits), 'head')).findings.map((f) => f.line),
      [12],
    );
    const built = {
      ...site,
      'docs/conf.py': "from theme import conf\nglobals().update(conf.build_config('x'))\nproject = 'x'\n",
    };
    const run = await docsRun(built, { 'docs/guides/x.rst': page(`${body}\n\nAnd :ref:\`Alpha\`.`) });
    assert.deepEqual(
      (await findingsOf(links, run, 'head')).findings.map((f) => f.line),
      [12],
    );
    const outcome = await links.run({
      tree: run.head,
      other: run.base,
      state: 'head',
      docsDir: '.',
      changes: run.changes,
      signal: AbortSignal.timeout(60_000),
    });
    assert.match(outcome.notes?.[0] ?? '', /does not assign "extensions" plainly/);
  });

  test('a deleted page breaks the toctree and :doc: of pages the run did not touch', async () => {
    const run = await docsRun(SITE, { 'docs/tutorial.md': null });
    const nav = await findingsOf(navigation, run, 'head');
    assert.deepEqual(
      nav.findings.map((f) => `${f.path}:${f.line}`),
      ['docs/index.rst:8'],
    );
    const broken = await findingsOf(links, run, 'head');
    assert.deepEqual(
      broken.findings.map((f) => `${f.path}:${f.line}`),
      ['docs/guides/topics/beta.md:4'],
    );
    assert.deepEqual((await findingsOf(navigation, run, 'base')).lines, []);
    assert.deepEqual((await findingsOf(links, run, 'base')).lines, []);
  });

  test('a moved page: entries naming its old place are findings until they follow it', async () => {
    const moved = await docsRun(SITE, {}, [
      { from: 'docs/hidden-page.rst', to: 'docs/guides/hidden-page.rst' },
    ]);
    const head = await findingsOf(navigation, moved, 'head');
    assert.deepEqual(
      head.findings.map((f) => `${f.path}:${f.line} ${f.message.replace(/: .*$/, '')}`),
      [
        'docs/guides/hidden-page.rst:null this page is in no toctree, so Sphinx warns "document isn\'t included in any toctree"',
        'docs/index.rst:13 toctree entry "hidden-page" names no document',
      ],
    );
    assert.match(head.findings[1]!.message, /did you mean "\/guides\/hidden-page"\?/);
    const followed = await docsRun(
      SITE,
      { 'docs/index.rst': SITE['docs/index.rst']!.replace('   hidden-page', '   guides/hidden-page') },
      [{ from: 'docs/hidden-page.rst', to: 'docs/guides/hidden-page.rst' }],
    );
    assert.deepEqual((await findingsOf(navigation, followed, 'head')).lines, []);
  });

  test('a finding already in the base is reported on both states with the same rule, path and message', async () => {
    const site = { ...SITE, 'docs/hidden-page.rst': page('Hidden', 'See :doc:`nope`.') };
    const run = await docsRun(site, {
      'docs/hidden-page.rst': page('Hidden', 'A new first line.\n\nSee :doc:`nope`.'),
    });
    const head = await findingsOf(links, run, 'head');
    const base = await findingsOf(links, run, 'base');
    assert.equal(head.findings.length, 1);
    assert.equal(base.findings.length, 1);
    assert.notEqual(head.findings[0]!.line, base.findings[0]!.line);
    const key = (f: { rule: string; path: string; message: string }) => [f.rule, f.path, f.message];
    assert.deepEqual(key(head.findings[0]!), key(base.findings[0]!));
  });

  test('markup Sphinx rejects is a finding: a one-colon directive, an unclosed MyST toctree, options without a blank line', async () => {
    const run = await docsRun(SITE, {
      'docs/tutorial.md': '# Tutorial\n\n```{toctree}\nhidden-page\n\n## Later\n',
      'docs/hidden-page.rst': page(
        'Hidden',
        '.. toctree:\n\n   tutorial\n\n.. toctree::\n   :maxdepth: 1\n   tutorial\n',
      ),
    });
    const head = await findingsOf(navigation, run, 'head');
    assert.deepEqual(
      head.findings.filter((f) => f.rule === 'pages').map((f) => `${f.path}:${f.line}`),
      ['docs/hidden-page.rst:4', 'docs/hidden-page.rst:10', 'docs/tutorial.md:3'],
    );
  });

  test('a changed conf.py whose root_doc names no document is a finding', async () => {
    const run = await docsRun(SITE, { 'docs/conf.py': `${SITE['docs/conf.py']}root_doc = 'start'\n` });
    const head = await findingsOf(navigation, run, 'head');
    assert.deepEqual(
      head.findings.map((f) => `${f.path} ${f.message.replace(/: .*$/, '')}`),
      ['docs/conf.py root_doc "start" names no document'],
    );
  });

  test('other sites are skipped', async () => {
    const run = await docsRun(
      { 'docs.json': '{"navigation": []}', 'conf.py': 'project = "x"\n' },
      { 'a.mdx': '# A\n' },
    );
    for (const check of [navigation, links]) {
      const outcome = await findingsOf(check, run, 'head');
      assert.deepEqual(outcome.findings, []);
      assert.match(outcome.skipped ?? '', /not a Sphinx site/);
    }
  });
});
