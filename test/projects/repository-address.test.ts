// Repositories on link-local and cloud metadata addresses are refused (docs/security.mdx,
// "Repository addresses"): a project's repository and API URL, a context repository's, at create
// and update, names resolved; and again right before git contacts a remote, so that a name that
// resolves to such an address only later is caught. Private and loopback addresses stay allowed;
// DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1 allows the rest. Names are resolved through the real
// lookup of node:dns, answered here for the test's own names.
import assert from 'node:assert/strict';
import dns from 'node:dns/promises';
import { after, afterEach, before, describe, test } from 'node:test';
import { DocwrightError } from '../../src/errors.ts';
import { createHost, gitAccess, HostError, type HostOptions } from '../../src/git/hosts/index.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

/** What the test's names resolve to; every other name goes to the real lookup. */
const answers = new Map<string, string>();
const realLookup = dns.lookup;

function answerLookups(): void {
  // biome-ignore lint/suspicious/noExplicitAny: the lookup's overloads are answered as `all: true`
  (dns as any).lookup = async (name: string, options: unknown) => {
    const address = answers.get(name);
    if (address === undefined) return realLookup(name, options as never);
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
}

async function refusal(
  promise: Promise<unknown>,
): Promise<{ code: string; fields: string[]; message: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DocwrightError, String(error));
    return { code: error.code, fields: (error.fields ?? []).map((f) => f.field), message: error.message };
  }
  assert.fail('expected a refusal');
}

const REFUSED = [
  'http://169.254.169.254/acme/docs',
  'http://169.254.0.7:3000/acme/docs',
  'http://[fe80::1]/acme/docs',
  'http://[fd00:ec2::254]/acme/docs',
  'http://[::ffff:169.254.169.254]/acme/docs',
  'http://100.100.100.200/acme/docs',
  'https://metadata.google.internal/acme/docs',
  'https://git.rebound.test/acme/docs',
];

describe('repository addresses', () => {
  let t: TestApp;
  let allowing: TestApp;
  before(async () => {
    answerLookups();
    answers.set('git.rebound.test', '169.254.10.20');
    t = await startTestApp();
    allowing = await startTestApp({ env: { DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL: '1' } });
  });
  after(async () => {
    dns.lookup = realLookup;
    await Promise.all([t.close(), allowing.close()]);
  });
  afterEach(() => {
    answers.clear();
    answers.set('git.rebound.test', '169.254.10.20');
  });

  const project = (repository: string, extra: Record<string, unknown> = {}) => ({
    name: 'Docs',
    repository,
    host: 'gitlab',
    ref: 'main',
    ...extra,
  });

  test('a project on a link-local or metadata address is refused, naming the field and the setting', async () => {
    for (const repository of REFUSED) {
      const r = await refusal(t.app.projects.create(project(repository)));
      assert.deepEqual([r.code, r.fields], ['invalid-request', ['repository']], repository);
      assert.match(r.message, /link-local or cloud metadata address/, repository);
      assert.match(r.message, /DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1/, repository);
    }
    const named = await refusal(t.app.projects.create(project('https://git.rebound.test/acme/docs')));
    assert.match(named.message, /git\.rebound\.test resolves to 169\.254\.10\.20/);
    const api = await refusal(
      t.app.projects.create(project('https://gitlab.com/acme/docs', { apiUrl: 'http://169.254.169.254' })),
    );
    assert.deepEqual(api.fields, ['apiUrl']);
    assert.deepEqual(await t.app.projects.list(), [], 'nothing refused was stored');
  });

  test('private and loopback addresses stay allowed, by address and by name', async () => {
    answers.set('git.corp.test', '10.20.30.40');
    for (const repository of [
      'http://10.0.0.5/acme/docs',
      'http://192.168.1.9:8080/acme/docs',
      'http://127.0.0.1:3000/acme/docs',
      'http://[::1]:3000/acme/docs',
      'https://git.corp.test/acme/docs',
    ]) {
      const created = await t.app.projects.create(project(repository));
      assert.equal(created.repository, repository);
    }
  });

  test('update and context add refuse them too', async () => {
    const created = await t.app.projects.create(project('http://10.0.0.6/acme/docs'));
    for (const repository of REFUSED) {
      const r = await refusal(t.app.projects.update(created.id, { repository, host: 'gitlab' }));
      assert.deepEqual([r.code, r.fields], ['invalid-request', ['repository']], repository);
    }
    const api = await refusal(t.app.projects.update(created.id, { apiUrl: 'http://[fe80::2]/api/v4' }));
    assert.deepEqual(api.fields, ['apiUrl']);
    assert.equal((await t.app.projects.get(created.id)).repository, 'http://10.0.0.6/acme/docs');

    const { projectId } = await seedProject(t.app);
    for (const repository of REFUSED) {
      const r = await refusal(
        t.app.contextRepositories.add(projectId, { name: 'api', repository, host: 'gitea' }),
      );
      assert.deepEqual([r.code, r.fields], ['invalid-request', ['repository']], repository);
    }
    const contextApi = await refusal(
      t.app.contextRepositories.add(projectId, {
        name: 'api',
        repository: 'https://gitea.com/acme/api',
        apiUrl: 'http://100.100.100.200/api/v1',
      }),
    );
    assert.deepEqual(contextApi.fields, ['apiUrl']);
    assert.deepEqual(await t.app.contextRepositories.list(projectId), []);
  });

  test('DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1 allows them', async () => {
    for (const repository of REFUSED) {
      const created = await allowing.app.projects.create(project(repository));
      assert.equal(created.repository, new URL(repository).href, repository);
    }
    const { projectId } = await seedProject(allowing.app);
    const added = await allowing.app.contextRepositories.add(projectId, {
      name: 'api',
      repository: 'http://169.254.169.254/acme/api',
      host: 'gitea',
    });
    assert.equal(added.repository, 'http://169.254.169.254/acme/api');
  });

  test('at git time the name is resolved again: one that now resolves to a metadata address is refused before git contacts it', async () => {
    answers.set('git.later.test', '10.1.1.1');
    const saved = await t.app.projects.create(project('https://git.later.test/acme/docs'));
    const host = createHost(saved, { token: 'glpat-addressTest0123456789' });
    assert.equal((await gitAccess(host)).url, 'https://git.later.test/acme/docs.git');
    answers.set('git.later.test', '169.254.169.254');
    const error = await gitAccess(host).then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof HostError, String(error));
    assert.equal(error.code, 'repository-address-refused');
    assert.match(error.message, /git\.later\.test resolves to 169\.254\.169\.254/);
    assert.ok(!error.message.includes('glpat-'), 'no token in the message');
    assert.equal(
      (await gitAccess(host, undefined, { allowLinkLocal: true })).url,
      'https://git.later.test/acme/docs.git',
    );
  });

  test('API calls resolve the name too: a metadata address is refused before any request, a redirect to one is not followed', async () => {
    answers.set('api.later.test', '169.254.169.254');
    const sent: string[] = [];
    const counting: typeof fetch = async (input) => {
      sent.push(String(input));
      return new Response('{"default_branch":"main"}', { headers: { 'content-type': 'application/json' } });
    };
    const hostOf = (kind: 'github' | 'gitlab' | 'gitea', options: HostOptions) =>
      createHost(
        { host: kind, repository: 'https://code.corp.test/acme/docs', apiUrl: 'https://api.later.test' },
        { token: 'tok-apiAddressTest0123456789' },
        { retry: { attempts: 1 }, ...options },
      );
    for (const kind of ['github', 'gitlab', 'gitea'] as const) {
      const error = await hostOf(kind, { fetch: counting })
        .defaultBranch()
        .then(
          () => assert.fail('expected a refusal'),
          (e: unknown) => e,
        );
      assert.ok(error instanceof HostError, String(error));
      assert.equal(error.code, 'repository-address-refused', kind);
      assert.match(error.message, /api\.later\.test resolves to 169\.254\.169\.254/, kind);
    }
    assert.equal(sent.length, 0, 'no request was sent');
    assert.equal(await hostOf('gitlab', { fetch: counting, allowLinkLocal: true }).defaultBranch(), 'main');
    assert.equal(sent.length, 1);

    // A request without credentials would follow a redirect to another origin: not to this one.
    answers.set('api.later.test', '10.0.0.9');
    sent.length = 0;
    const redirecting: typeof fetch = async (input) => {
      sent.push(String(input));
      return new Response(null, {
        status: 302,
        headers: { location: 'http://169.254.169.254/latest/meta-data/' },
      });
    };
    const anonymous = createHost(
      { host: 'gitlab', repository: 'https://code.corp.test/acme/docs', apiUrl: 'https://api.later.test' },
      {},
      { fetch: redirecting, retry: { attempts: 1 } },
    );
    const redirected = await anonymous.defaultBranch().then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e,
    );
    assert.ok(redirected instanceof HostError, String(redirected));
    assert.match(
      redirected.message,
      /redirected to http:\/\/169\.254\.169\.254.*link-local or cloud metadata/,
    );
    assert.deepEqual(sent, ['https://api.later.test/api/v4/projects/acme%2Fdocs']);
  });
});
