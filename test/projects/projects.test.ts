import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

describe('projects', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a bare repository is a valid local project; its default branch is read from HEAD', async () => {
    const source = createGitRepository();
    const bare = path.join(temporaryDirectory('docwright-bare-'), 'docs.git');
    execFileSync('git', ['clone', '-q', '--bare', source, bare]);
    const project = await t.app.projects.create({ name: 'Bare', repository: bare });
    assert.equal(project.host, 'local');
    assert.equal(project.ref, 'main');
    assert.equal(project.repository, `file://${bare}`);
  });

  test('credentials are sealed at rest, reported only as present, and open again with the key', async () => {
    const project = await t.app.projects.create({
      name: 'S',
      repository: createGitRepository(),
      token: 'ghp_supersecret',
    });
    assert.deepEqual(project.credentials, { token: true, githubApp: false, modelKeys: [] });
    assert.ok(!JSON.stringify(project).includes('ghp_supersecret'));
    const row = await t.app.store.db
      .selectFrom('projects')
      .select('secrets')
      .where('id', '=', project.id)
      .executeTakeFirstOrThrow();
    assert.ok(row.secrets && !row.secrets.includes('ghp_supersecret'));
    assert.deepEqual(await t.app.projects.getSecrets(project.id), { token: 'ghp_supersecret' });
    const cleared = await t.app.projects.update(project.id, { token: null, labels: ['docs'] });
    assert.deepEqual(cleared.credentials, { token: false, githubApp: false, modelKeys: [] });
    assert.deepEqual(cleared.settings.labels, ['docs']);
    assert.deepEqual(await t.app.projects.getSecrets(project.id), {});
  });

  test('update validates and changes only what it names', async () => {
    const project = await t.app.projects.create({
      name: 'U',
      repository: createGitRepository(),
      model: 'openai/gpt-x',
    });
    const updated = await t.app.projects.update(project.id, { docsDir: 'docs', rateLimit: 5 });
    assert.equal(updated.settings.docsDir, 'docs');
    assert.equal(updated.rateLimit, 5);
    assert.equal(updated.model, 'openai/gpt-x');
    await assert.rejects(t.app.projects.update(project.id, { docsDir: '../outside' }), /docsDir/);
    await assert.rejects(t.app.projects.update(project.id, { model: 'llama' }), /model/);
    await assert.rejects(t.app.projects.update(project.id, { nmae: 'typo' }), /nmae/);
    await assert.rejects(t.app.projects.update('prj_missing', { name: 'x' }), { code: 'project-not-found' });
  });

  test('a commit author email is what git takes: the default bot address is one, on create and update', async () => {
    const bot = 'docwright[bot]@users.noreply.github.com';
    const project = await t.app.projects.create({
      name: 'E',
      repository: createGitRepository(),
      authorEmail: bot,
    });
    assert.equal(project.settings.authorEmail, bot);
    const other = '12345+octo-bot[bot]@users.noreply.github.com';
    assert.equal(
      (await t.app.projects.update(project.id, { authorEmail: other })).settings.authorEmail,
      other,
    );
    assert.equal((await t.app.projects.update(project.id, { authorEmail: bot })).settings.authorEmail, bot);
    for (const refused of [
      '',
      'no-at-sign',
      'two words@example.com',
      'a@b@c',
      '<a@b>',
      'a@b\n',
      'a@',
      '@b',
    ]) {
      await assert.rejects(t.app.projects.update(project.id, { authorEmail: refused }), (error: Error) => {
        assert.match(error.message, /authorEmail/, JSON.stringify(refused));
        return true;
      });
    }
  });
});
