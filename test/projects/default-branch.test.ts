// A project created without `ref` takes its repository's default branch, asked with the
// credentials the request gave: a private repository (here a smart-HTTP server that answers
// only the token) names its branch to them and to nobody else.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const TOKEN = 'glpat-defaultBranch0123456789';

describe('the default branch of a private repository', () => {
  let t: TestApp;
  let git: GitHttpServer;
  let repository: string;
  before(async () => {
    [t, git] = await Promise.all([
      startTestApp(),
      startGitHttpServer({ tokens: { [TOKEN]: 'read' }, username: 'oauth2' }),
    ]);
    await git.createRepository('group/docs', { 'index.mdx': '# Docs\n' }, { branch: 'trunk' });
    repository = `${git.baseUrl}/group/docs`;
  });
  after(() => Promise.all([t?.close(), git?.close()]));

  test('with the token: the branch HEAD names, and the token never reaches the command line', async () => {
    const project = await t.app.projects.create({
      name: 'Private',
      repository,
      host: 'gitlab',
      apiUrl: `${git.baseUrl}/api/v4`,
      token: TOKEN,
    });
    assert.equal(project.ref, 'trunk');
    const asked = git.requests.filter((r) => r.url.includes('/info/refs'));
    assert.ok(asked.length > 0, 'the server was asked');
    assert.ok(asked.every((r) => !r.url.includes(TOKEN)));
  });

  test('without it: refused, asking for ref', async () => {
    await assert.rejects(t.app.projects.create({ name: 'Private', repository, host: 'gitlab' }), {
      code: 'invalid-request',
      message: /cannot read the default branch .*; set ref/,
    });
  });
});
