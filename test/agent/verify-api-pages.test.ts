import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mintlifyLinksCheck } from '../../src/agent/verify/mintlify-links.ts';
import { mintlifyOpenapiCheck } from '../../src/agent/verify/mintlify-openapi.ts';
import { mintlifyRedirectsCheck } from '../../src/agent/verify/mintlify-redirects.ts';
import { mintlifySnippetsCheck } from '../../src/agent/verify/mintlify-snippets.ts';
import { page, runBoth, scenario } from '../helpers/verify-trees.ts';

const SPEC = {
  openapi: '3.1.0',
  info: { title: 'Acme', version: '1' },
  paths: { '/users': { get: {}, post: {} }, '/users/{id}': { get: {} } },
  webhooks: { 'user.created': { post: {} } },
};

const SITE = {
  'docs.json': JSON.stringify({
    name: 'T',
    navigation: { $ref: './nav.json' },
    redirects: { $ref: './redirects.json' },
  }),
  'nav.json': JSON.stringify({
    tabs: [
      { tab: 'Docs', groups: [{ group: 'A', pages: ['index', 'guides/setup', 'guides/old'] }] },
      { tab: 'API', openapi: 'api/openapi.json', groups: [{ group: 'Users', pages: ['api/list-users'] }] },
    ],
  }),
  'redirects.json': JSON.stringify([{ source: '/legacy/:slug', destination: '/guides/:slug' }]),
  'api/openapi.json': JSON.stringify(SPEC),
  'api/other.yaml': 'openapi: 3.0.0\ninfo: {title: Other, version: "1"}\npaths:\n  /orders:\n    get: {}\n',
  'snippets/intro.mdx': 'Hello.\n',
  'index.mdx': page('Home'),
  'guides/setup.mdx': page('Setup'),
  'guides/old.mdx': page('Old'),
  'legacy/thing.mdx': page('Thing'),
  'api/list-users.mdx': '---\ntitle: List users\nopenapi: GET /users\n---\n',
};

describe('snippets', () => {
  test('an import of a missing snippet is reported at its line; absolute, relative and package imports', async () => {
    const body = [
      "import Intro from '/snippets/intro.mdx';",
      "import Gone from '/snippets/intro-v2.mdx';",
      "import Near from '../snippets/intro.mdx';",
      "import { x } from 'some-package';",
      '',
      '<Intro />',
    ].join('\n');
    const s = await scenario(SITE, { write: { 'guides/setup.mdx': page('Setup', body) } });
    const { introduced } = await runBoth(mintlifySnippetsCheck, s);
    assert.equal(introduced.length, 1);
    assert.equal(introduced[0]!.line, 6);
    assert.equal(
      introduced[0]!.message,
      'import from "/snippets/intro-v2.mdx" finds no file: did you mean "/snippets/intro.mdx"?',
    );
  });
});

describe('openapi', () => {
  const apiPage = (operation: string) => `---\ntitle: Op\nopenapi: ${operation}\n---\n`;

  test('operations of the spec named in the navigation ($ref file) pass; a missing one is reported with the nearest', async () => {
    const s = await scenario(SITE, {
      write: {
        'api/get-user.mdx': apiPage('GET /users/{id}'),
        'api/hook.mdx': apiPage('webhook user.created'),
        'api/named.mdx': apiPage('api/other.yaml GET /orders'),
        'api/bad.mdx': apiPage('GET /user/{id}'),
        'api/bad-method.mdx': apiPage('DELETE /users'),
      },
    });
    const { introduced } = await runBoth(mintlifyOpenapiCheck, s);
    assert.deepEqual(
      introduced.map((f) => f.line),
      [3, 3],
      'the line of the openapi field',
    );
    assert.deepEqual(
      introduced.map((f) => [f.path, f.message]),
      [
        [
          'api/bad-method.mdx',
          'openapi: "DELETE /users" names no operation of api/openapi.json: use an operation the spec defines',
        ],
        [
          'api/bad.mdx',
          'openapi: "GET /user/{id}" names no operation of api/openapi.json: did you mean "GET /users/{id}"?',
        ],
      ],
    );
  });

  test('links to pages generated from the spec are not reported (Mintlify makes their slugs); others still are', async () => {
    const body = '[a](/api-reference/users/list-users) [b](/api-reference) [c](/api-refrence/users)';
    const s = await scenario(SITE, { write: { 'guides/setup.mdx': page('Setup', body) } });
    const { introduced } = await runBoth(mintlifyLinksCheck, s);
    assert.deepEqual(
      introduced.map((f) => /^link to "([^"]+)"/.exec(f.message)![1]),
      ['/api-refrence/users'],
    );
  });

  test('a spec file that does not exist is reported', async () => {
    const s = await scenario(SITE, { write: { 'api/x.mdx': apiPage('api/missing.json GET /users') } });
    const { introduced } = await runBoth(mintlifyOpenapiCheck, s);
    assert.match(
      introduced[0]?.message ?? '',
      /names the spec api\/missing\.json, which is not a readable OpenAPI file/,
    );
  });
});

describe('redirects', () => {
  test('a moved page without a redirect gets the exact entry to add, in the $ref file that holds the redirects', async () => {
    const s = await scenario(SITE, { move: [['guides/old.mdx', 'guides/new.mdx']] });
    const { introduced } = await runBoth(mintlifyRedirectsCheck, s);
    assert.equal(introduced.length, 1);
    assert.equal(introduced[0]!.path, 'redirects.json');
    assert.equal(
      introduced[0]!.message,
      'guides/old.mdx was moved to guides/new.mdx but no redirect keeps its old address "/guides/old" working: add {"source": "/guides/old", "destination": "/guides/new"} to "redirects" in redirects.json',
    );
  });

  test('a redirect added by the run passes; a wildcard source covers the page; a deleted page needs one too', async () => {
    const redirects = JSON.stringify([
      { source: '/legacy/:slug', destination: '/guides/:slug' },
      { source: '/guides/old', destination: '/guides/new' },
    ]);
    const moved = await scenario(SITE, {
      move: [['guides/old.mdx', 'guides/new.mdx']],
      write: { 'redirects.json': redirects },
    });
    assert.deepEqual((await runBoth(mintlifyRedirectsCheck, moved)).head, []);
    const wildcard = await scenario(SITE, { remove: ['legacy/thing.mdx'] });
    assert.deepEqual((await runBoth(mintlifyRedirectsCheck, wildcard)).head, []);
    const deleted = await scenario(SITE, { remove: ['guides/setup.mdx'] });
    const { introduced } = await runBoth(mintlifyRedirectsCheck, deleted);
    assert.match(
      introduced[0]?.message ?? '',
      /was deleted but .* add \{"source": "\/guides\/setup", "destination": "\/<the page that replaces it>"\}/,
    );
  });

  test('a redirect to a page that does not exist is reported', async () => {
    const redirects = JSON.stringify([{ source: '/guides/old', destination: '/guides/neww' }]);
    const s = await scenario(SITE, {
      move: [['guides/old.mdx', 'guides/new.mdx']],
      write: { 'redirects.json': redirects },
    });
    const { introduced } = await runBoth(mintlifyRedirectsCheck, s);
    assert.match(
      introduced[0]?.message ?? '',
      /goes to "\/guides\/neww", which is no page: point it to "\/guides\/new"/,
    );
  });
});
