import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { detectSite } from '../../src/agent/site/detect.ts';
import { siteMap } from '../../src/agent/site/site-map.ts';
import { readSphinxConf } from '../../src/agent/site/sphinx-conf.ts';
import { readRst } from '../../src/agent/site/sphinx-markup.ts';
import { readMyst } from '../../src/agent/site/sphinx-myst.ts';
import type { NavNode } from '../../src/agent/site/types.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

/** A tree of files in a new temporary directory. */
async function writeTree(files: Record<string, string>): Promise<string> {
  const root = temporaryDirectory('docwright-sphinx-');
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
  return root;
}

/** The navigation as indented lines: pages by docname (file or MISSING), sections by label. */
function outline(nodes: NavNode[], depth = 0): string[] {
  return nodes.flatMap((node) => {
    const pad = '  '.repeat(depth);
    if (node.type === 'section') return [`${pad}[${node.label}]`, ...outline(node.children, depth + 1)];
    if (node.type === 'endpoint') return [`${pad}${node.ref}`];
    return [`${pad}${node.ref} ${node.file ?? 'MISSING'}`];
  });
}

const SITE = {
  'docs/source/conf.py': [
    '# Configuration file for the Sphinx documentation builder.',
    'project = "Demo"',
    'root_doc = "contents"',
    '# master_doc = "ignored"',
    'extensions = [',
    '    "sphinx.ext.autodoc",',
    "    'myst_parser',  # MyST pages",
    ']',
    "exclude_patterns = ['_build', '**/drafts']",
    "templates_path = ['_templates']",
    '',
  ].join('\n'),
  'docs/source/contents.rst': [
    'Demo',
    '====',
    '',
    '.. toctree::',
    '   :maxdepth: 2',
    '   :caption: Getting started',
    '',
    '   intro',
    '   Installing <install/index>',
    '   https://example.com/blog',
    '   self',
    '',
    '.. toctree::',
    '   :hidden:',
    '',
    '   /reference/api',
    '   gone',
    '',
  ].join('\n'),
  'docs/source/intro.rst': 'Introduction\n============\n\nHello.\n',
  'docs/source/install/index.md': [
    '# Installing',
    '',
    '```{toctree}',
    ':glob:',
    ':caption: Platforms',
    '',
    'platforms/*',
    '```',
    '',
    ':::{toctree}',
    'upgrade',
    ':::',
    '',
  ].join('\n'),
  'docs/source/install/platforms/linux.rst': 'Linux\n=====\n',
  'docs/source/install/platforms/macos.md': '# macOS\n',
  'docs/source/install/upgrade.rst': 'Upgrade\n=======\n',
  'docs/source/reference/api.rst': 'API\n===\n\n.. toctree::\n\n   ../intro\n',
  'docs/source/orphan.rst': ':orphan:\n\nOrphan\n======\n',
  'docs/source/lost.rst': 'Lost\n====\n',
  'docs/source/drafts/wip.rst': 'WIP\n===\n',
  'docs/source/_templates/layout.rst': 'not a page\n',
  'docs/source/_build/html/index.rst': 'not a page\n',
  'docs/README.md': '# readme\n',
};

describe('Sphinx sites', () => {
  test('conf.py in docs/source: documents, toctree navigation, captions, globs, hidden, MyST, cycles', async () => {
    const root = await writeTree(SITE);
    const info = await detectSite(root, '.');
    assert.equal(info.kind, 'sphinx');
    assert.equal(info.configFile, 'docs/source/conf.py');
    assert.equal(info.contentDir, 'docs/source');
    assert.equal(info.configError, null);
    assert.deepEqual(info.pages, [
      'docs/source/contents.rst',
      'docs/source/install/index.md',
      'docs/source/install/platforms/linux.rst',
      'docs/source/install/platforms/macos.md',
      'docs/source/install/upgrade.rst',
      'docs/source/intro.rst',
      'docs/source/lost.rst',
      'docs/source/orphan.rst',
      'docs/source/reference/api.rst',
    ]);
    assert.deepEqual(outline(info.navigation ?? []), [
      'contents docs/source/contents.rst',
      '[Getting started]',
      '  intro docs/source/intro.rst',
      '  [Installing (install/index)]',
      '    install/index docs/source/install/index.md',
      '    [Platforms]',
      '      install/platforms/linux docs/source/install/platforms/linux.rst',
      '      install/platforms/macos docs/source/install/platforms/macos.md',
      '    install/upgrade docs/source/install/upgrade.rst',
      '[API (reference/api)]',
      '  reference/api docs/source/reference/api.rst',
      '  intro docs/source/intro.rst',
      'gone MISSING',
    ]);
    assert.deepEqual(
      info.missing.map((p) => p.ref),
      ['gone'],
    );
    const map = siteMap(info);
    assert.match(map, /Documentation site: Sphinx \(config: docs\/source\/conf\.py\)/);
    assert.match(map, /- Getting started: intro/);
    assert.match(map, /install\/platforms\/macos\.md/);
    assert.match(map, /gone \(MISSING\)/);
    assert.match(map, /Pages not in the navigation \(2;[^\n]*\n\.\/: lost\.rst, orphan\.rst/);
    assert.match(map, /toctree/);
  });

  test('conf.py at the docs folder with defaults (index root, .rst only), and a conf.py that is not Sphinx', async () => {
    const root = await writeTree({
      'docs/conf.py': 'html_theme = "alabaster"\n',
      'docs/index.rst': 'Home\n====\n\n.. toctree::\n\n   guide\n',
      'docs/guide.rst': 'Guide\n=====\n',
      'docs/notes.md': '# Not a page without MyST\n',
    });
    const info = await detectSite(root, 'docs');
    assert.equal(info.kind, 'sphinx');
    assert.deepEqual(info.pages, ['docs/guide.rst', 'docs/index.rst']);
    assert.deepEqual(
      info.navPages.map((p) => p.file),
      ['docs/index.rst', 'docs/guide.rst'],
    );
    const other = await writeTree({ 'conf.py': 'DEBUG = True\n', 'a.md': '# A\n' });
    assert.equal((await detectSite(other, '.')).kind, 'markdown');
  });

  test('conf.py settings are read without running it', () => {
    const conf = readSphinxConf(
      [
        'import os',
        'master_doc = "index"',
        "root_doc = 'start'",
        "source_suffix = {'.rst': 'restructuredtext', '.txt': 'restructuredtext'}",
        "exclude_patterns = ['_build']",
        "exclude_patterns += ['old/**']",
        "exclude_patterns.append('tmp')",
        "extensions = ['sphinx.ext.autosectionlabel']",
        "extensions.extend(['myst_nb', 'sphinx.ext.intersphinx'])",
        'autosectionlabel_prefix_document = True',
        "os.system('never run')",
      ].join('\n'),
    );
    assert.equal(conf.rootDoc, 'start');
    assert.deepEqual(conf.sourceSuffixes, ['.rst', '.txt', '.md']);
    assert.deepEqual(conf.excludePatterns, ['_build', 'old/**', 'tmp']);
    assert.equal(conf.myst, true);
    assert.equal(conf.autosectionlabel, true);
    assert.equal(conf.autosectionlabelPrefixDocument, true);
    assert.equal(conf.intersphinx, true);
    assert.deepEqual(readSphinxConf("source_suffix = '.txt'\n").sourceSuffixes, ['.txt']);
  });

  test('reStructuredText: labels, sections, roles, directive paths, literal blocks, problems', () => {
    const doc = readRst(
      [
        ':orphan:',
        '',
        '.. _top label:',
        '',
        'Title',
        '=====',
        '',
        'See :doc:`intro`, :doc:`Intro <../intro>`, :ref:`top label` and :ref:`!nolink`.',
        '',
        '.. image:: img/a.png',
        '',
        '.. figure:: /img/b.png',
        '   :name: fig-b',
        '',
        'Example::',
        '',
        '   :doc:`in-a-literal-block`',
        '',
        '.. code-block:: rst',
        '',
        '   :ref:`in-code`',
        '',
        '.. toctree:',
        '',
        '.. toctree::',
        '   :maxdepth: 1',
        '   intro',
        '',
        '.. include:: snippet.txt',
        'Text right after.',
        '',
        '.. a comment naming :doc:`not-checked`',
        '   and more of it :ref:`nor-this`',
        '',
        '.. |logo| image:: img/logo.png',
        '',
        '- item',
        '',
        '  .. code-block:: python',
        '',
        '     x = 1',
        '- next item, no blank line needed',
      ].join('\n'),
    );
    assert.equal(doc.orphan, true);
    assert.equal(doc.title, 'Title');
    assert.deepEqual(doc.labels, ['top label', 'fig-b']);
    assert.deepEqual(
      doc.references.map((r) => `${r.kind} ${r.target} ${r.line}`),
      [
        'image img/a.png 10',
        'figure /img/b.png 12',
        'include snippet.txt 29',
        'image img/logo.png 35',
        'doc intro 8',
        'doc ../intro 8',
        'ref top label 8',
      ],
    );
    assert.deepEqual(
      doc.problems.map((p) => p.line),
      [23, 27, 30],
    );
    assert.match(doc.problems[0]!.message, /one colon.*write "\.\. toctree::"/);
    assert.match(doc.problems[1]!.message, /leave a blank line between the options and the content/);
    assert.match(doc.problems[2]!.message, /ends without a blank line/);
  });

  test('MyST: fences, colon fences, YAML options, labels, roles, eval-rst, an unclosed directive', () => {
    const doc = readMyst(
      [
        '---',
        'orphan: true',
        '---',
        '(start)=',
        '# Start',
        '',
        '````{toctree}',
        '---',
        'caption: Guides',
        'hidden: true',
        '---',
        'one',
        'Two <two>',
        '````',
        '',
        '```python',
        '{doc}`not-a-role`',
        '```',
        '',
        'See {doc}`/one` and {ref}`Start <start>`.',
        '',
        '```{eval-rst}',
        '.. _rst-label:',
        '',
        'See :doc:`two`.',
        '```',
        '',
        '```{include} part.md',
        '```',
        '',
        ':::{note}',
        'Never closed.',
      ].join('\n'),
    );
    assert.equal(doc.orphan, true);
    assert.equal(doc.title, 'Start');
    assert.deepEqual(doc.labels, ['start', 'rst-label']);
    assert.deepEqual(
      doc.toctrees.map((t) => [t.caption, t.hidden, t.entries.map((e) => e.target)]),
      [['Guides', true, ['one', 'two']]],
    );
    assert.deepEqual(
      doc.references.map((r) => `${r.kind} ${r.target} ${r.line}`),
      ['doc two 25', 'include part.md 28', 'doc /one 20', 'ref start 20'],
    );
    assert.deepEqual(
      doc.problems.map((p) => p.line),
      [31],
    );
    assert.match(doc.problems[0]!.message, /\{note\} directive's fence is never closed.*:::/);
  });
});
