// A project's context repositories (docs/code-context.mdx): validated like a project's repository, at most 10,
// names unique in the project and `docs` reserved; the token and the webhook secret sealed at rest
// and opened again only for the worker and the webhook check; removed with their project.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DocwrightError } from '../../src/errors.ts';
import { createGitRepository, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

/** The error's code and the fields it names. */
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

describe('context repositories', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { DOCWRIGHT_PUBLIC_URL: 'https://docs-bot.example.com/' } });
  });
  after(() => t.close());

  test('add returns the entry with its webhook URL and secret; list shows it without secrets', async () => {
    const { projectId } = await seedProject(t.app);
    const added = await t.app.contextRepositories.add(projectId, {
      name: 'api',
      repository: 'https://github.com/acme/api.git/',
      ref: 'main',
      token: 'ghp_contextsecret123',
    });
    assert.equal(added.repository, 'https://github.com/acme/api');
    assert.equal(added.host, 'github');
    assert.equal(added.ref, 'main');
    assert.equal(added.hasToken, true);
    assert.equal(added.webhookUrl, `https://docs-bot.example.com/hooks/${projectId}/api`);
    assert.match(added.webhookSecret, /^[A-Za-z0-9_-]{43,}$/);
    assert.ok(Buffer.from(added.webhookSecret, 'base64url').length >= 32);

    const other = await t.app.contextRepositories.add(projectId, {
      name: 'sdk_v2',
      repository: 'https://git.acme.internal/acme/sdk',
      host: 'gitea',
      apiUrl: 'https://git.acme.internal/api/v1',
    });
    assert.equal(other.hasToken, false);
    assert.equal(other.ref, null, 'no ref: the repository default branch');
    assert.notEqual(other.webhookSecret, added.webhookSecret);

    const listed = await t.app.contextRepositories.list(projectId);
    assert.deepEqual(
      listed.map((r) => r.name),
      ['api', 'sdk_v2'],
    );
    const { webhookSecret: _secret, ...view } = added;
    assert.deepEqual(listed[0], view);
    const shown = JSON.stringify(listed);
    assert.ok(!shown.includes('ghp_contextsecret123') && !shown.includes(added.webhookSecret));
  });

  test('the token and the webhook secret are sealed at rest and open again for the worker and docs/automations.mdx', async () => {
    const { projectId } = await seedProject(t.app);
    const added = await t.app.contextRepositories.add(projectId, {
      name: 'code',
      repository: 'https://gitlab.com/acme/code',
      token: 'glpat-contextsecret456',
    });
    const rows = await t.app.store.db
      .selectFrom('context_repositories')
      .selectAll()
      .where('project_id', '=', projectId)
      .execute();
    assert.equal(rows.length, 1);
    const stored = JSON.stringify(rows);
    assert.ok(!stored.includes('glpat-contextsecret456'), 'token not in the clear');
    assert.ok(!stored.includes(added.webhookSecret), 'webhook secret not in the clear');
    assert.match(rows[0]!.webhook_secret, /^v1\./);

    assert.deepEqual(await t.app.contextRepositories.accessFor(projectId), [
      {
        name: 'code',
        repository: 'https://gitlab.com/acme/code',
        host: 'gitlab',
        apiUrl: null,
        ref: null,
        secrets: { token: 'glpat-contextsecret456' },
      },
    ]);
    assert.equal(await t.app.contextRepositories.webhookSecretFor(projectId, 'code'), added.webhookSecret);
    assert.equal(await t.app.contextRepositories.webhookSecretFor(projectId, 'nope'), undefined);
  });

  test('a run reads its project, its credentials and its context repositories’ in one statement', async () => {
    const { projectId } = await seedProject(t.app, { token: 'ghp_projectsecret789' });
    const bare = await t.app.projects.getForRun(projectId);
    assert.deepEqual(bare.contexts, []);
    assert.deepEqual(bare.project, await t.app.projects.get(projectId));
    assert.equal(bare.secrets.token, 'ghp_projectsecret789');

    await t.app.contextRepositories.add(projectId, {
      name: 'sdk',
      repository: 'https://github.com/acme/sdk',
    });
    await t.app.contextRepositories.add(projectId, {
      name: 'api',
      repository: 'https://gitlab.com/acme/api',
      ref: 'release',
      token: 'glpat-contextsecret000',
    });
    // Every statement the read sends, counted where the services send them.
    const { store } = t.app;
    const read = store.read;
    let statements = 0;
    store.read = (query) => {
      statements++;
      return read(query);
    };
    try {
      const forRun = await t.app.projects.getForRun(projectId);
      assert.equal(statements, 1);
      assert.deepEqual(forRun.contexts, await t.app.contextRepositories.accessFor(projectId));
      assert.deepEqual(
        forRun.contexts.map((c) => [c.name, c.ref, c.secrets.token]),
        [
          ['api', 'release', 'glpat-contextsecret000'],
          ['sdk', null, undefined],
        ],
      );
    } finally {
      store.read = read;
    }
    await assert.rejects(t.app.projects.getForRun('prj_missing'), { code: 'project-not-found' });
  });

  test('names: a slug, docs reserved, unique in the project (another project may reuse it)', async () => {
    const { projectId } = await seedProject(t.app);
    const add = (name: unknown, pid = projectId) =>
      t.app.contextRepositories.add(pid, { name, repository: 'https://github.com/acme/api' });
    for (const bad of ['API', 'my repo', '-api', '_context', 'a/b', '', 'x'.repeat(64), 7]) {
      const r = await refusal(add(bad));
      assert.equal(r.code, 'invalid-request', String(bad));
      assert.deepEqual(r.fields, ['name'], String(bad));
    }
    const slug = await refusal(add('API'));
    assert.match(slug.message, /name must be a slug: lowercase letters, digits, - and _/);
    const docs = await refusal(add('docs'));
    assert.deepEqual([docs.code, docs.fields], ['invalid-request', ['name']]);
    assert.match(docs.message, /docs is reserved/);

    await add('x'.repeat(63));
    await add('api');
    const taken = await refusal(add('api'));
    assert.deepEqual([taken.code, taken.fields], ['context-repository-exists', ['name']]);
    assert.match(taken.message, /already has a context repository named api; choose another name/);
    const elsewhere = await seedProject(t.app);
    assert.equal((await add('api', elsewhere.projectId)).name, 'api');
  });

  test('the 11th is refused, saying to remove one first', async () => {
    const { projectId } = await seedProject(t.app);
    for (let i = 0; i < 10; i++) {
      await t.app.contextRepositories.add(projectId, {
        name: `repo-${i}`,
        repository: `https://github.com/acme/repo-${i}`,
      });
    }
    const eleventh = await refusal(
      t.app.contextRepositories.add(projectId, { name: 'repo-10', repository: 'https://github.com/acme/r' }),
    );
    assert.equal(eleventh.code, 'too-many-context-repositories');
    assert.match(eleventh.message, /has 10 context repositories, the most it may have; remove one first/);
    assert.equal((await t.app.contextRepositories.list(projectId)).length, 10);
    // Concurrent adds past the limit: the limit still holds.
    await t.app.contextRepositories.remove(projectId, 'repo-9');
    await t.app.contextRepositories.remove(projectId, 'repo-8');
    const racing = await Promise.allSettled(
      [0, 1, 2, 3].map((i) =>
        t.app.contextRepositories.add(projectId, { name: `race-${i}`, repository: 'https://github.com/a/b' }),
      ),
    );
    assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 2);
    assert.equal((await t.app.contextRepositories.list(projectId)).length, 10);
  });

  test('the repository follows a project’s URL rules, host detection and local checks', async () => {
    const { projectId } = await seedProject(t.app);
    const add = (input: Record<string, unknown>) =>
      t.app.contextRepositories.add(projectId, { name: 'c', ...input });
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ repository: 'ftp://github.com/a/b' }, 'repository', /unsupported scheme ftp/],
      [{ repository: 'http://github.com/a/b' }, 'repository', /http is allowed only for hosts on loopback/],
      [{ repository: 'http://8.8.8.8/a/b', host: 'gitea' }, 'repository', /http is allowed only/],
      [{ repository: 'https://user:pw@github.com/a/b' }, 'repository', /must not contain credentials/],
      [{ repository: 'https://github.com/onlyowner' }, 'repository', /must name a repository/],
      [{ repository: 'https://git.example.com/a/b' }, 'host', /cannot tell the code host/],
      [{ repository: 'https://github.com/a/b', host: 'local' }, 'host', /host local needs a local path/],
      [{ repository: '/no/such/repository' }, 'repository', /./],
      [{ repository: 'https://github.com/a/b', apiUrl: 'ftp://x' }, 'apiUrl', /http\(s\) URL/],
      [{ repository: 'https://github.com/a/b', ref: 'a..b' }, 'ref', /valid branch name/],
      [{ repository: 'https://github.com/a/b', host: 'svn' }, 'host', /./],
      [{ repository: 'https://github.com/a/b', token: '' }, 'token', /./],
      [{ repository: 'https://github.com/a/b', secrets: 'x' }, 'secrets', /not a known field/],
    ];
    for (const [input, field, message] of cases) {
      const r = await refusal(add(input));
      assert.equal(r.code, 'invalid-request', JSON.stringify(input));
      assert.deepEqual(r.fields, [field], JSON.stringify(input));
      assert.match(r.message, message, JSON.stringify(input));
    }
    // http to loopback or a private network is allowed, as for a project; a local path too.
    assert.equal(
      (await add({ repository: 'http://127.0.0.1:3000/acme/api', host: 'gitea' })).repository,
      'http://127.0.0.1:3000/acme/api',
    );
    const local = createGitRepository({ 'index.ts': 'export {}\n' });
    const added = await t.app.contextRepositories.add(projectId, { name: 'local', repository: local });
    assert.deepEqual([added.host, added.repository], ['local', `file://${local}`]);
    assert.equal((await t.app.contextRepositories.list(projectId)).length, 2, 'nothing refused was stored');
    const noProject = await refusal(
      t.app.contextRepositories.add('prj_missing', { name: 'c', repository: 'https://github.com/a/b' }),
    );
    assert.equal(noProject.code, 'project-not-found');
  });

  test('remove deletes one entry; an unknown name is context-repository-not-found', async () => {
    const { projectId } = await seedProject(t.app);
    await t.app.contextRepositories.add(projectId, { name: 'a', repository: 'https://github.com/acme/a' });
    await t.app.contextRepositories.add(projectId, { name: 'b', repository: 'https://github.com/acme/b' });
    const removed = await t.app.contextRepositories.remove(projectId, 'a');
    assert.equal(removed.name, 'a');
    assert.deepEqual(
      (await t.app.contextRepositories.list(projectId)).map((r) => r.name),
      ['b'],
    );
    const again = await refusal(t.app.contextRepositories.remove(projectId, 'a'));
    assert.equal(again.code, 'context-repository-not-found');
    assert.equal((await refusal(t.app.contextRepositories.list('prj_missing'))).code, 'project-not-found');
  });

  test('deleting the project removes its context repositories, and no other project’s', async () => {
    const doomed = await seedProject(t.app);
    const kept = await seedProject(t.app);
    for (const p of [doomed, kept]) {
      await t.app.contextRepositories.add(p.projectId, { name: 'api', repository: 'https://github.com/a/b' });
    }
    await t.app.projects.delete(doomed.projectId);
    const rows = await t.app.store.db
      .selectFrom('context_repositories')
      .select('project_id')
      .where('project_id', 'in', [doomed.projectId, kept.projectId])
      .execute();
    assert.deepEqual(
      rows.map((r) => r.project_id),
      [kept.projectId],
    );
  });

  test('without DOCWRIGHT_PUBLIC_URL the webhook URL uses the given base, else http://localhost:8080', async () => {
    const bare = await startTestApp();
    try {
      const { projectId } = await seedProject(bare.app);
      const added = await bare.app.contextRepositories.add(
        projectId,
        { name: 'api', repository: 'https://github.com/a/b' },
        { baseUrl: 'http://192.168.1.5:8080' },
      );
      assert.equal(added.webhookUrl, `http://192.168.1.5:8080/hooks/${projectId}/api`);
      const [listed] = await bare.app.contextRepositories.list(projectId);
      assert.equal(listed!.webhookUrl, `http://localhost:8080/hooks/${projectId}/api`);
    } finally {
      await bare.close();
    }
  });
});

describe('the project option commentOnSource', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('is off by default, set on create, changed by update, refused when not a boolean', async () => {
    const repository = createGitRepository();
    const plain = await t.app.projects.create({ name: 'P', repository });
    assert.equal(plain.settings.commentOnSource, false);
    const on = await t.app.projects.create({ name: 'On', repository, commentOnSource: true });
    assert.equal(on.settings.commentOnSource, true);
    assert.equal((await t.app.projects.get(on.id)).settings.commentOnSource, true);
    const off = await t.app.projects.update(on.id, { commentOnSource: false, draft: true });
    assert.deepEqual([off.settings.commentOnSource, off.settings.draft], [false, true]);
    const unchanged = await t.app.projects.update(on.id, { labels: ['docs'] });
    assert.equal(unchanged.settings.commentOnSource, false);
    const r = await refusal(t.app.projects.update(on.id, { commentOnSource: 'yes' }));
    assert.deepEqual([r.code, r.fields], ['invalid-request', ['commentOnSource']]);
  });
});
