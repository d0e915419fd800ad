import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { detectSite } from '../../src/agent/site/detect.ts';
import { siteMap } from '../../src/agent/site/site-map.ts';
import { builtinChecks } from '../../src/agent/verify/builtin.ts';
import { mintlifyNavigationCheck } from '../../src/agent/verify/mintlify-navigation.ts';
import { mintlifyPagesCheck } from '../../src/agent/verify/mintlify-pages.ts';
import { page, runBoth, scenario } from '../helpers/verify-trees.ts';

/** A site whose navigation lives in `$ref` files two levels deep, through languages, tabs and groups. */
const REF_SITE = {
  'docs.json': JSON.stringify(
    {
      name: 'Acme',
      navigation: { $ref: './config/navigation.json' },
      redirects: [],
    },
    null,
    2,
  ),
  'config/navigation.json': JSON.stringify(
    {
      languages: [
        {
          language: 'en',
          tabs: [
            { tab: 'Docs', groups: [{ group: 'Start', pages: ['index'] }, { $ref: './guides.json' }] },
            {
              tab: 'API',
              anchors: [
                { anchor: 'Ref', dropdowns: [{ dropdown: 'v1', pages: ['api/intro', 'GET /users'] }] },
              ],
            },
          ],
        },
      ],
    },
    null,
    2,
  ),
  'config/guides.json': JSON.stringify({ group: 'Guides', pages: ['guides/setup'] }, null, 2),
  'index.mdx': page('Home'),
  'guides/setup.mdx': page('Setup'),
  'api/intro.mdx': page('Intro'),
};

const withGuides = (pages: string[]) => ({
  'config/guides.json': `${JSON.stringify({ group: 'Guides', pages }, null, 2)}\n`,
});

describe('navigation through $ref files', () => {
  test('a new page added to the $ref file that holds its section passes', async () => {
    const s = await scenario(REF_SITE, {
      write: { 'guides/new.mdx': page('New'), ...withGuides(['guides/setup', 'guides/new']) },
    });
    const { head } = await runBoth(mintlifyNavigationCheck, s);
    assert.deepEqual(head, []);
  });

  test('a new page named nowhere is reported, pointing at the $ref file of its section', async () => {
    const s = await scenario(REF_SITE, { write: { 'guides/new.mdx': page('New') } });
    const { introduced } = await runBoth(mintlifyNavigationCheck, s);
    assert.equal(introduced.length, 1);
    assert.equal(introduced[0]!.path, 'guides/new.mdx');
    assert.match(introduced[0]!.message, /add "guides\/new" .* in config\/guides\.json$/);
  });

  test('a page already outside the navigation is found alike on both states when the run edits the navigation', async () => {
    const s = await scenario(
      { ...REF_SITE, 'guides/hidden.mdx': page('Hidden') },
      {
        write: {
          'guides/hidden.mdx': page('Hidden', 'Edited.'),
          'guides/new.mdx': page('New'),
          ...withGuides(['guides/new', 'guides/setup']),
        },
      },
    );
    const { head, introduced } = await runBoth(mintlifyNavigationCheck, s);
    assert.equal(head.length, 1);
    assert.deepEqual(introduced, []);
  });

  test('repository files and snippets the run changes are not asked to be in the navigation', async () => {
    const s = await scenario(REF_SITE, {
      write: { 'README.md': '# Acme docs\n', 'snippets/note.mdx': 'A note.\n', 'CONTRIBUTING.md': '# How\n' },
    });
    assert.deepEqual((await runBoth(mintlifyNavigationCheck, s)).head, []);
  });

  test('a missing page named in a $ref file is reported in that file, at its line', async () => {
    const s = await scenario(REF_SITE, { write: withGuides(['guides/setup', 'guides/missing']) });
    const { introduced } = await runBoth(mintlifyNavigationCheck, s);
    assert.equal(introduced.length, 1);
    assert.equal(introduced[0]!.path, 'config/guides.json');
    assert.equal(introduced[0]!.line, 5);
    assert.match(
      introduced[0]!.message,
      /names "guides\/missing" but no page guides\/missing\.mdx or guides\/missing\.md exists/,
    );
  });

  test('a deleted page still named is reported with the fix; a moved one with its new entry', async () => {
    const deleted = await runBoth(
      mintlifyNavigationCheck,
      await scenario(REF_SITE, { remove: ['guides/setup.mdx'] }),
    );
    assert.match(deleted.introduced[0]?.message ?? '', /this run deleted that page: remove the entry/);
    const moved = await runBoth(
      mintlifyNavigationCheck,
      await scenario(REF_SITE, { move: [['api/intro.mdx', 'api/overview.mdx']] }),
    );
    assert.equal(moved.introduced.length, 2, 'the stale entry, and the new page named nowhere');
    assert.match(moved.introduced[0]!.message, /replace the entry with "api\/overview"/);
    assert.equal(moved.introduced[0]!.path, 'config/navigation.json');
  });

  test('an entry already missing in the base is found on both states (preexisting)', async () => {
    const s = await scenario(
      { ...REF_SITE, ...withGuides(['guides/setup', 'guides/gone']) },
      { write: { 'guides/setup.mdx': page('Setup', 'More.') } },
    );
    const { head, base, introduced } = await runBoth(mintlifyNavigationCheck, s);
    assert.equal(head.length, 1);
    assert.equal(base.length, 1);
    assert.deepEqual(introduced, []);
  });

  test('mint.json’s older shape (a list of groups) is read too', async () => {
    const s = await scenario(
      {
        'mint.json': JSON.stringify({
          name: 'Old',
          navigation: [{ group: 'A', pages: ['a', { group: 'B', pages: ['b'] }] }],
        }),
        'a.mdx': page('A'),
      },
      { write: { 'c.mdx': page('C') } },
    );
    const { head } = await runBoth(mintlifyNavigationCheck, s);
    assert.deepEqual(
      head.map((f) => f.path),
      ['mint.json', 'c.mdx'],
    );
  });

  test('the site map the agent is shown lists a page named only in a $ref file', async () => {
    const s = await scenario(REF_SITE);
    const info = await detectSite(s.root, '.');
    assert.deepEqual(
      info.navPages.map((p) => p.file),
      ['index.mdx', 'guides/setup.mdx', 'api/intro.mdx'],
    );
    assert.deepEqual(info.missing, []);
    assert.match(siteMap(info), /guides\/setup/);
  });

  test('a site that is not Mintlify is skipped by every built-in check', async () => {
    const s = await scenario(
      { 'mkdocs.yml': 'site_name: x\n', 'docs/index.md': '# Hi\n' },
      { write: { 'docs/a.md': '# A\n' } },
    );
    for (const check of builtinChecks()) {
      const { skipped } = await runBoth(check, s);
      assert.match(skipped ?? '', /not a Mintlify site/, check.name);
    }
  });
});

describe('pages parse as Mintlify parses them', () => {
  test('an unclosed <Tip> in a .md page is an error, at its line; a good page passes', async () => {
    const s = await scenario(REF_SITE, {
      write: {
        'guides/tip.md': page('Tip', 'Intro.\n\n<Tip>\nNever closed.\n'),
        'guides/ok.md': page('Ok', '<Tip>Fine</Tip>'),
      },
    });
    const { introduced } = await runBoth(mintlifyPagesCheck, s);
    assert.equal(introduced.length, 1);
    assert.equal(introduced[0]!.path, 'guides/tip.md');
    assert.equal(introduced[0]!.line, 7);
    assert.match(introduced[0]!.message, /does not parse as MDX .*Tip/);
    assert.doesNotMatch(introduced[0]!.message, /\d+:\d+/, 'no positions in the message');
  });

  test('frontmatter that is not YAML is an error at its line', async () => {
    const s = await scenario(REF_SITE, { write: { 'guides/setup.mdx': '---\ntitle: "open\n---\n\nBody\n' } });
    const { introduced } = await runBoth(mintlifyPagesCheck, s);
    assert.equal(introduced.length, 1);
    assert.match(introduced[0]!.message, /invalid YAML frontmatter/);
  });

  test('docs.json and $ref files: broken JSON, a missing file and a cycle are each reported where they are', async () => {
    const s = await scenario(REF_SITE, {
      write: {
        'config/guides.json': '{"group": "Guides", "pages": [\n  "guides/setup",\n}\n',
        'config/navigation.json': JSON.stringify({
          groups: [{ $ref: './guides.json' }, { $ref: './nowhere.json' }, { $ref: './loop.json' }],
        }),
        'config/loop.json': JSON.stringify({ group: 'Loop', pages: [{ $ref: './loop.json' }] }),
      },
    });
    const { introduced } = await runBoth(mintlifyPagesCheck, s);
    const byFile = introduced.map((f) => `${f.path}: ${f.message.slice(0, 40)}`).sort();
    assert.equal(introduced.length, 3, byFile.join('\n'));
    assert.ok(
      introduced.some(
        (f) => f.path === 'config/guides.json' && /invalid JSON/.test(f.message) && f.line === 3,
      ),
    );
    assert.ok(
      introduced.some(
        (f) => f.path === 'config/navigation.json' && /nowhere\.json, which does not exist/.test(f.message),
      ),
    );
    assert.ok(introduced.some((f) => f.path === 'config/loop.json' && /makes a cycle/.test(f.message)));
  });

  test('a docs.json that is not JSON is reported', async () => {
    const s = await scenario(REF_SITE, {
      write: { 'docs.json': '{"name": "Acme",,}', 'guides/new.mdx': page('New') },
    });
    const { introduced } = await runBoth(mintlifyPagesCheck, s);
    assert.equal(introduced[0]?.path, 'docs.json');
    assert.match(introduced[0]!.message, /invalid JSON/);
    assert.deepEqual(
      (await runBoth(mintlifyNavigationCheck, s)).head,
      [],
      'its navigation is unknown, not empty',
    );
  });
});
