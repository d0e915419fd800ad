// A host's pull request conversation (src/git/hosts/*-conversation.ts) against each host's
// double: who the token is, who may write, comments listed since a time, replies; and failures
// as the other host operations give them (credentials, a missing pull request), redacted.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type ApiCodeHost, createHost, HostError } from '../../src/git/hosts/index.ts';
import { type GitHubApi, startGitHubApi } from '../doubles/github-api.ts';
import { HOST_KINDS, type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';

for (const kind of HOST_KINDS) {
  describe(`${kind}: the pull request conversation`, () => {
    let hosted: HostedRepository;
    let host: ApiCodeHost;
    before(async () => {
      hosted = await startHostedRepository(kind, { 'index.mdx': '# Hi\n' });
      const project = { host: kind, repository: hosted.repository, apiUrl: hosted.apiUrl };
      host = createHost(project, { token: hosted.token }) as ApiCodeHost;
    });
    after(() => hosted?.close());

    test('whoAmI, canWrite, listComments since a time, reply', async () => {
      const { conversation } = hosted;
      const me = await host.conversation.whoAmI();
      assert.equal(me.login, conversation.self);
      conversation.member('alice', 'write');
      conversation.member('rita', 'read');
      const alice = { id: '', login: 'alice' };
      const ids = { alice: '', rita: '' };
      const pull = conversation.openPull('docwright/conv');
      const first = conversation.comment(pull.number, 'alice', 'first', {
        url: pull.url,
        headRef: 'docwright/conv',
      });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const middle = new Date().toISOString();
      await new Promise((resolve) => setTimeout(resolve, 5));
      conversation.comment(pull.number, 'rita', 'second', { url: pull.url, headRef: 'docwright/conv' });
      const all = await host.conversation.listComments(pull.number, '1970-01-01T00:00:00.000Z', 50);
      assert.deepEqual(
        all.map((c) => c.body),
        ['first', 'second'],
      );
      assert.equal(all[0]!.id, String(first.id));
      ids.alice = all[0]!.author.id;
      ids.rita = all[1]!.author.id;
      const later = await host.conversation.listComments(pull.number, middle, 50);
      assert.deepEqual(
        later.map((c) => c.body),
        ['second'],
      );
      assert.equal(await host.conversation.canWrite({ ...alice, id: ids.alice }), true);
      assert.equal(await host.conversation.canWrite({ id: ids.rita, login: 'rita' }), false);
      assert.equal(await host.conversation.canWrite({ id: '77777', login: 'nobody' }), false);
      const posted = await host.conversation.reply(all[0]!.replyTo, 'On it.');
      assert.ok(posted.id > 0);
      assert.deepEqual(conversation.commentsBy(conversation.self, pull.number), ['On it.']);
      assert.deepEqual(hosted.violations(), []);
    });

    test('a wrong token fails as host-auth-failed, redacted; a missing pull request as change-unavailable', async () => {
      const wrong = createHost(
        { host: kind, repository: hosted.repository, apiUrl: hosted.apiUrl },
        { token: `${hosted.token.slice(0, -4)}beef` },
      ) as ApiCodeHost;
      const failure = await wrong.conversation.whoAmI().catch((error: unknown) => error);
      assert.ok(failure instanceof HostError);
      assert.equal(failure.code, 'host-auth-failed');
      assert.ok(!failure.message.includes('beef'), failure.message);
      const missing = await host.conversation
        .reply({ kind: 'pull-request', number: 999 }, 'hello')
        .catch((error: unknown) => error);
      assert.ok(missing instanceof HostError);
      assert.equal(missing.code, 'change-unavailable');
    });
  });
}

describe('github: a GitHub App installation', () => {
  const appId = 4343;
  const installationId = 88;
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  let github: GitHubApi;
  before(async () => {
    github = await startGitHubApi({ app: { id: appId, publicKey: keys.publicKey, installationId } });
    github.addRepo('octo/app-docs');
  });
  after(() => github?.close());

  test('is its bot account (`<slug>[bot]`, from GET /app), so that its own replies are known', async () => {
    const host = createHost(
      { host: 'github', repository: 'https://github.com/octo/app-docs', apiUrl: github.baseUrl },
      {
        githubAppId: String(appId),
        githubPrivateKey: keys.privateKey,
        githubInstallationId: String(installationId),
      },
    ) as ApiCodeHost;
    assert.deepEqual(await host.conversation.whoAmI(), { id: '', login: `app-${appId}[bot]` });
    const pull = github.openPull('octo/app-docs', { head: 'docwright/app', title: 'Docs' });
    await host.conversation.reply({ kind: 'pull-request', number: pull.number }, 'On it.');
    const [reply] = github.repo('octo/app-docs').thread.by(`app-${appId}[bot]`, pull.number);
    assert.equal(reply?.body, 'On it.', 'its replies are by that account');
    assert.deepEqual(github.violations, []);
  });
});
