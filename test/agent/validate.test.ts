import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { detectSite } from '../../src/agent/site/detect.ts';
import { jsonErrorOffset, validateChanges } from '../../src/agent/validate.ts';
import { writeMintlifySite } from '../helpers/mintlify-site.ts';

const temps: string[] = [];
after(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function put(root: string, file: string, content: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await writeFile(path.join(root, file), content);
}

async function site(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'docwright-validate-'));
  temps.push(root);
  for (const [file, content] of Object.entries(files)) await put(root, file, content);
  return root;
}

const page = (title: string, body = 'Some text.') => `---\ntitle: "${title}"\n---\n\n${body}\n`;

/** A small valid Mintlify site. */
async function mintlifySite(): Promise<string> {
  return site({
    'docs.json': `${JSON.stringify(
      {
        name: 'Test',
        navigation: {
          tabs: [
            { tab: 'Docs', groups: [{ group: 'Start', pages: ['index', 'guides/setup', 'guides/plain'] }] },
          ],
        },
      },
      null,
      2,
    )}\n`,
    'index.mdx': page('Home', '<Card title="Setup" href="/guides/setup">\n  Set it up.\n</Card>'),
    'guides/setup.mdx': page('Setup'),
    'guides/plain.md': page('Plain'),
    'snippets/note.mdx': '<Note>Shared.</Note>\n',
  });
}

async function editJson(root: string, file: string, change: (json: Record<string, unknown>) => void) {
  const json = JSON.parse(await readFile(path.join(root, file), 'utf8'));
  change(json);
  await writeFile(path.join(root, file), `${JSON.stringify(json, null, 2)}\n`);
}

/** Replaces string entries equal to `from` anywhere in the navigation (null removes them). */
function replaceNav(value: unknown, from: string, to: string | null): unknown {
  if (Array.isArray(value)) {
    return value.filter((v) => !(to === null && v === from)).map((v) => replaceNav(v, from, to));
  }
  if (typeof value === 'string') return value === from ? to : value;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceNav(v, from, to)]));
  }
  return value;
}

/** Finds the first navigation group with this name. */
function findGroup(value: unknown, name: string): { pages: unknown[] } | null {
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = findGroup(v, name);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (o.group === name && Array.isArray(o.pages)) return o as { pages: unknown[] };
    for (const v of Object.values(o)) {
      const found = findGroup(v, name);
      if (found) return found;
    }
  }
  return null;
}

describe('validateChanges on a Mintlify site', () => {
  test('a correct edit of an existing page passes', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await put(
      root,
      'guides/setup.mdx',
      page('Setup', '<Steps>\n  <Step title="One">Do it.</Step>\n</Steps>'),
    );
    assert.deepEqual(await validateChanges(root, ['guides/setup.mdx'], before), []);
  });

  test('broken MDX: an unclosed JSX tag, reported with its line', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await put(root, 'guides/setup.mdx', page('Setup', 'Intro.\n\n<Card title="x">\n\nNever closed.'));
    const problems = await validateChanges(root, ['guides/setup.mdx'], before);
    assert.equal(problems.length, 1);
    // Frontmatter is 3 lines, then a blank line and "Intro.", a blank line, and the tag on line 7.
    assert.match(
      problems[0]!,
      /^guides\/setup\.mdx:7:1: MDX does not compile: Expected a closing tag for `<Card>`/,
    );
  });

  test('broken MDX: a JavaScript expression that does not parse, and an HTML comment', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await put(root, 'guides/setup.mdx', 'Value: {1 +}\n');
    await put(root, 'index.mdx', page('Home', '<!-- a comment -->'));
    const problems = await validateChanges(root, ['guides/setup.mdx', 'index.mdx'], before);
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /^guides\/setup\.mdx:1:\d+: MDX does not compile/);
    assert.match(problems[1]!, /^index\.mdx:5:\d+: MDX does not compile/);
  });

  test('invalid JSON in docs.json, with line and column', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    const text = await readFile(path.join(root, 'docs.json'), 'utf8');
    await writeFile(path.join(root, 'docs.json'), text.replace('"guides/setup",', '"guides/setup",,'));
    const problems = await validateChanges(root, ['docs.json'], before);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /^docs\.json:\d+:\d+: invalid JSON: unexpected `,`/);
    const [, line] = /^docs\.json:(\d+):/.exec(problems[0]!)!;
    const lines = (await readFile(path.join(root, 'docs.json'), 'utf8')).split('\n');
    assert.match(lines[Number(line) - 1]!, /"guides\/setup",,/);
  });

  test('docs.json without navigation', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await writeFile(path.join(root, 'docs.json'), '{"name": "Test"}\n');
    assert.deepEqual(await validateChanges(root, ['docs.json'], before), [
      'docs.json: docs.json has no "navigation"',
    ]);
  });

  test('bad YAML frontmatter, with the line in the file; an unclosed frontmatter block', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await put(root, 'guides/setup.mdx', '---\ntitle: "Setup\ndescription: x\n---\n\nBody.\n');
    await put(root, 'guides/plain.md', '---\ntitle: Plain\n\n# Plain\n');
    const problems = await validateChanges(root, ['guides/setup.mdx', 'guides/plain.md'], before);
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems[0]!, /^guides\/plain\.md:1:1: the frontmatter block .* never closed/);
    assert.match(problems[1]!, /^guides\/setup\.mdx:[234]:\d+: invalid YAML frontmatter: /);
  });

  test('a page with CRLF line endings: quoted frontmatter values parse, errors keep their lines', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    const crlf = (text: string) => text.replaceAll('\n', '\r\n');
    await put(
      root,
      'guides/setup.mdx',
      crlf('---\ntitle: "Setup"\ndescription: \'Set it up\'\n---\n\nBody.\n'),
    );
    assert.deepEqual(await validateChanges(root, ['guides/setup.mdx'], before), []);
    await put(root, 'guides/setup.mdx', crlf('---\ntitle: "Setup\ndescription: x\n---\n\n<Card>\n'));
    const problems = await validateChanges(root, ['guides/setup.mdx'], before);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /^guides\/setup\.mdx:[23]:\d+: invalid YAML frontmatter: /);
  });

  test('frontmatter that is not a mapping', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await put(root, 'guides/setup.mdx', '---\n- a\n- b\n---\n\nBody.\n');
    assert.deepEqual(await validateChanges(root, ['guides/setup.mdx'], before), [
      'guides/setup.mdx:2:1: the frontmatter must be a YAML mapping (key: value lines)',
    ]);
  });

  test('docs.json naming a page that does not exist', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await editJson(root, 'docs.json', (json) => {
      findGroup(json.navigation, 'Start')!.pages.push('guides/ghost');
    });
    const problems = await validateChanges(root, ['docs.json'], before);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(
      problems[0]!,
      /^docs\.json:\d+:\d+: the navigation names "guides\/ghost" but no page guides\/ghost\.mdx or guides\/ghost\.md exists/,
    );
  });

  test('a new page that is not in the navigation', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await put(root, 'guides/new.mdx', page('New'));
    await put(root, 'snippets/new-snippet.mdx', 'A snippet is not a page.\n');
    assert.deepEqual(await validateChanges(root, ['guides/new.mdx', 'snippets/new-snippet.mdx'], before), [
      'guides/new.mdx: this new page is not in the navigation; add "guides/new" to the right place in docs.json',
    ]);
    // Registered, it passes.
    await editJson(root, 'docs.json', (json) => {
      findGroup(json.navigation, 'Start')!.pages.push('guides/new');
    });
    assert.deepEqual(
      await validateChanges(root, ['guides/new.mdx', 'snippets/new-snippet.mdx', 'docs.json'], before),
      [],
    );
  });

  test('navigation in a $ref file: a new page named there passes, a missing page named there is reported', async () => {
    const root = await site({
      'docs.json': JSON.stringify({ name: 'Ref', navigation: { $ref: './nav/navigation.json' } }),
      'nav/navigation.json': JSON.stringify({
        groups: [{ group: 'Start', pages: ['index'] }, { $ref: './guides.json' }],
      }),
      'nav/guides.json': JSON.stringify({ group: 'Guides', pages: ['guides/setup'] }),
      'index.mdx': page('Home'),
      'guides/setup.mdx': page('Setup'),
    });
    const before = await detectSite(root, '.');
    await put(root, 'guides/new.mdx', page('New'));
    await put(
      root,
      'nav/guides.json',
      JSON.stringify({ group: 'Guides', pages: ['guides/setup', 'guides/new'] }),
    );
    assert.deepEqual(await validateChanges(root, ['guides/new.mdx', 'nav/guides.json'], before), []);
    await put(
      root,
      'nav/guides.json',
      JSON.stringify({ group: 'Guides', pages: ['guides/setup', 'guides/new', 'guides/ghost'] }),
    );
    const problems = await validateChanges(root, ['guides/new.mdx', 'nav/guides.json'], before);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /the navigation names "guides\/ghost" but no page/);
  });

  test('`created` overrides which pages count as new', async () => {
    const root = await mintlifySite();
    await put(root, 'guides/hidden.mdx', page('Hidden'));
    const before = await detectSite(root, '.');
    // An existing hidden page edited in the run is fine ...
    assert.deepEqual(await validateChanges(root, ['guides/hidden.mdx'], before), []);
    // ... unless the caller says it was created in this run.
    const problems = await validateChanges(root, ['guides/hidden.mdx'], before, {
      created: ['guides/hidden.mdx'],
    });
    assert.equal(problems.length, 1);
  });

  test('a deleted page still in the navigation', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await unlink(path.join(root, 'guides/setup.mdx'));
    const problems = await validateChanges(root, ['guides/setup.mdx'], before);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /^docs\.json:\d+:\d+: the navigation names "guides\/setup"/);
    assert.match(problems[0]!, /guides\/setup\.mdx was deleted or moved in this run/);
    // Removing the entry too makes it valid.
    await editJson(root, 'docs.json', (json) => {
      json.navigation = replaceNav(json.navigation, 'guides/setup', null);
    });
    assert.deepEqual(await validateChanges(root, ['guides/setup.mdx', 'docs.json'], before), []);
  });

  test('entries missing before the run are not blamed on it', async () => {
    const root = await mintlifySite();
    await editJson(root, 'docs.json', (json) => {
      findGroup(json.navigation, 'Start')!.pages.push('already/missing');
    });
    const before = await detectSite(root, '.');
    assert.equal(before.missing.length, 1);
    await put(root, 'index.mdx', page('Home, edited'));
    assert.deepEqual(await validateChanges(root, ['index.mdx', 'docs.json'], before), []);
  });

  test('other JSON and YAML files parse', async () => {
    const root = await mintlifySite();
    const before = await detectSite(root, '.');
    await put(root, 'data/values.json', '{"a": [1, 2}');
    await put(root, 'data/values.yml', 'a: [1, 2\n');
    await put(root, 'data/ok.json', '{"a": [1, 2]}');
    const problems = await validateChanges(
      root,
      ['data/values.json', 'data/values.yml', 'data/ok.json'],
      before,
    );
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems[0]!, /^data\/values\.json:1:12: invalid JSON: unexpected `}`/);
    assert.match(problems[1]!, /^data\/values\.yml:\d+:\d+: invalid YAML: /);
  });
});

describe('validateChanges on other sites', () => {
  test('MkDocs: new page must be in nav; nav must not name a missing page', async () => {
    const root = await site({
      'mkdocs.yml': 'site_name: T\nnav:\n  - Home: index.md\n  - Guide:\n      - guide/a.md\n',
      'docs/index.md': '# Home\n',
      'docs/guide/a.md': '# A\n',
    });
    const before = await detectSite(root, '.');
    await put(root, 'docs/guide/b.md', '# B\n');
    assert.deepEqual(await validateChanges(root, ['docs/guide/b.md'], before), [
      'docs/guide/b.md: this new page is not in the navigation; add "guide/b.md" to the right place in mkdocs.yml',
    ]);
    await put(
      root,
      'mkdocs.yml',
      'site_name: T\nnav:\n  - Home: index.md\n  - Guide:\n      - guide/a.md\n      - guide/b.md\n      - guide/c.md\n',
    );
    const problems = await validateChanges(root, ['docs/guide/b.md', 'mkdocs.yml'], before);
    assert.deepEqual(problems, [
      'mkdocs.yml:7:9: the navigation names "guide/c.md" but no page guide/c.md exists under docs/',
    ]);
  });

  test('Docusaurus: pages compile, navigation is not checked', async () => {
    const root = await site({
      'docusaurus.config.js': 'module.exports = {};',
      'docs/intro.mdx': page('Intro'),
    });
    const before = await detectSite(root, '.');
    await put(root, 'docs/new.mdx', page('New'));
    assert.deepEqual(await validateChanges(root, ['docs/new.mdx'], before), []);
    await put(root, 'docs/new.mdx', page('New', '<Tabs>'));
    assert.equal((await validateChanges(root, ['docs/new.mdx'], before)).length, 1);
  });

  test('jsonErrorOffset agrees with JSON.parse on what is valid', () => {
    for (const text of ['{}', '[1, -2.5e3, "a\\u00e9\\n", true, null, {"x": []}]', ' "s" ']) {
      assert.equal(jsonErrorOffset(text), -1, text);
    }
    assert.equal(jsonErrorOffset('{"a": 1,}'), 8);
    assert.equal(jsonErrorOffset('{"a": 1'), 7);
    assert.equal(jsonErrorOffset('[1] x'), 4);
    assert.equal(jsonErrorOffset('"bad \\x"'), 6);
  });
});

describe('validateChanges on a Mintlify site (test/helpers/mintlify-site.ts)', () => {
  async function fixture(): Promise<string> {
    const root = await mkdtemp(path.join(tmpdir(), 'docwright-site-'));
    temps.push(root);
    writeMintlifySite(root);
    return root;
  }

  test('add a page and register it in docs.json: valid', async (t) => {
    const root = await fixture();
    const before = await detectSite(root, '.');
    await put(
      root,
      'guides/writing-release-notes.mdx',
      [
        '---',
        'title: "Write release notes"',
        'description: "Turn merged changes into release notes readers can scan."',
        '---',
        '',
        '<Steps>',
        '  <Step title="Collect changes">',
        '    List what shipped.',
        '  </Step>',
        '</Steps>',
        '',
        '<Tip>Link each item to its page.</Tip>',
        '',
      ].join('\n'),
    );
    await editJson(root, 'docs.json', (json) => {
      findGroup(json.navigation, 'Best practices')!.pages.push('guides/writing-release-notes');
    });
    const started = performance.now();
    const problems = await validateChanges(root, ['guides/writing-release-notes.mdx', 'docs.json'], before);
    const elapsed = performance.now() - started;
    assert.deepEqual(problems, []);
    t.diagnostic(`validation of 2 changed files on the site: ${elapsed.toFixed(0)} ms`);
  });

  test('the same page without registering it: not reachable', async () => {
    const root = await fixture();
    const before = await detectSite(root, '.');
    await put(root, 'guides/orphan.mdx', page('Orphan'));
    assert.deepEqual(await validateChanges(root, ['guides/orphan.mdx'], before), [
      'guides/orphan.mdx: this new page is not in the navigation; add "guides/orphan" to the right place in docs.json',
    ]);
  });

  test('move a page and fix the navigation: valid; without the fix: invalid', async () => {
    const root = await fixture();
    const before = await detectSite(root, '.');
    await mkdir(path.join(root, 'start'), { recursive: true });
    await rename(path.join(root, 'quickstart.mdx'), path.join(root, 'start/quickstart.mdx'));
    const changed = ['quickstart.mdx', 'start/quickstart.mdx'];
    const broken = await validateChanges(root, changed, before);
    assert.equal(broken.length, 2, broken.join('\n'));
    assert.match(
      broken[0]!,
      /^docs\.json:\d+:\d+: the navigation names "quickstart" .*quickstart\.mdx was deleted or moved/,
    );
    assert.match(broken[1]!, /^start\/quickstart\.mdx: this new page is not in the navigation/);

    await editJson(root, 'docs.json', (json) => {
      json.navigation = replaceNav(json.navigation, 'quickstart', 'start/quickstart');
    });
    assert.deepEqual(await validateChanges(root, [...changed, 'docs.json'], before), []);
  });

  test('every page of the site is valid with CRLF line endings too', async () => {
    const root = await fixture();
    const before = await detectSite(root, '.');
    for (const file of before.pages) {
      const text = await readFile(path.join(root, file), 'utf8');
      await writeFile(path.join(root, file), text.replaceAll('\n', '\r\n'));
    }
    assert.deepEqual(await validateChanges(root, before.pages, before), []);
  });

  test('every page of the site compiles', async (t) => {
    const root = await fixture();
    const before = await detectSite(root, '.');
    const started = performance.now();
    const all = [...before.pages, 'snippets/counter.mdx'];
    assert.deepEqual(await validateChanges(root, all, before), []);
    t.diagnostic(
      `validation of all ${all.length} site pages: ${(performance.now() - started).toFixed(0)} ms`,
    );
  });
});
