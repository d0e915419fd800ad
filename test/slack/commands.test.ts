// `/docwright link|unlink|help` at POST /slack/commands, on both databases: signed like events,
// form-encoded, answered ephemerally; only a Slack workspace admin or owner (users.info) may
// link or unlink a channel.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type SlackApiDouble, signSlackRequest, startSlackApi } from '../doubles/slack-api.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

const SECRET = 'slack-signing-secret-commands-01234';

describe('POST /slack/commands', () => {
  let slack: SlackApiDouble;
  let t: TestApp;
  let url: string;
  let p: SeededProject;

  before(async () => {
    slack = await startSlackApi();
    slack.addUser({ id: 'U0ADMIN', is_admin: true });
    slack.addUser({ id: 'U0OWNER', is_owner: true });
    slack.addUser({ id: 'U0MEMBER' });
    t = await startTestApp({
      env: {
        DOCWRIGHT_SLACK_SIGNING_SECRET: SECRET,
        DOCWRIGHT_SLACK_BOT_TOKEN: slack.token,
        DOCWRIGHT_SLACK_API_URL: slack.apiUrl,
      },
    });
    url = await t.listen();
    p = await seedProject(t.app);
  });
  after(async () => {
    await t?.close();
    await slack?.close();
  });

  const command = async (user: string, text: string, channel = 'C0CMD', sign = true) => {
    const body = new URLSearchParams({
      token: 'deprecated',
      team_id: 'T0ACME',
      channel_id: channel,
      channel_name: 'docs',
      user_id: user,
      user_name: user.toLowerCase(),
      command: '/docwright',
      text,
      response_url: 'https://hooks.slack.test/commands/1',
      trigger_id: '1.2.3',
    }).toString();
    const response = await fetch(`${url}/slack/commands`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(sign ? signSlackRequest(SECRET, body) : signSlackRequest('wrong', body)),
      },
      body,
    });
    return {
      status: response.status,
      body: (await response.json()) as { response_type: string; text: string },
    };
  };
  const links = () => t.app.slack.links.list();

  test('a non-admin cannot link; an admin can, and the answer is ephemeral', async () => {
    const refused = await command('U0MEMBER', `link ${p.projectId}`);
    assert.equal(refused.status, 200);
    assert.equal(refused.body.response_type, 'ephemeral');
    assert.match(refused.body.text, /Only a Slack workspace admin or owner/);
    assert.deepEqual(await links(), []);
    const asked = slack.calls.filter((c) => c.method === 'users.info');
    assert.equal(asked.at(-1)?.args.user, 'U0MEMBER');

    const linked = await command('U0ADMIN', `link ${p.projectId}`);
    assert.equal(linked.body.response_type, 'ephemeral');
    assert.match(linked.body.text, new RegExp(`Linked this channel to project \`${p.projectId}\``));
    assert.deepEqual(
      (await links()).map((l) => [l.channelId, l.projectId, l.linkedBy]),
      [['C0CMD', p.projectId, 'slack:U0ADMIN']],
    );
    const help = await command('U0MEMBER', 'help');
    assert.match(help.body.text, new RegExp(`linked to project \`${p.projectId}\``));
  });

  test('an owner may unlink; a non-admin may not', async () => {
    await t.app.slack.links.link(p.projectId, 'C0UNL', 'test');
    assert.match((await command('U0MEMBER', 'unlink', 'C0UNL')).body.text, /Only a Slack workspace admin/);
    assert.ok((await links()).some((l) => l.channelId === 'C0UNL'));
    assert.match((await command('U0OWNER', 'unlink', 'C0UNL')).body.text, /Unlinked this channel/);
    assert.ok(!(await links()).some((l) => l.channelId === 'C0UNL'));
    assert.match((await command('U0OWNER', 'unlink', 'C0UNL')).body.text, /channel C0UNL is not linked/);
  });

  test('mistakes are explained: unknown project, bad usage, a user Slack does not know', async () => {
    const missing = await command('U0ADMIN', 'link prj_00000000000000000000000000');
    assert.match(missing.body.text, /project prj_00000000000000000000000000 does not exist/);
    assert.match((await command('U0ADMIN', 'link')).body.text, /usage: `\/docwright link prj_…`/);
    assert.match(
      (await command('U0GHOST', `link ${p.projectId}`)).body.text,
      /could not ask Slack who you are \(user_not_found\)/,
    );
  });

  test('an unsigned command is refused (401) and links nothing', async () => {
    const before = await links();
    const refused = await command('U0ADMIN', `link ${p.projectId}`, 'C0FORGED', false);
    assert.equal(refused.status, 401);
    assert.deepEqual(await links(), before);
  });
});
