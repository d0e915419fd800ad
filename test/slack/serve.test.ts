// `docwright serve` composes the Slack app (a real server process, both databases): a signed
// mention is acknowledged and, in the background, answered in its thread through the Web API
// double; the bot token and the signing secret appear nowhere in the process's output.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appMention, type SlackApiDouble, signSlackRequest, startSlackApi } from '../doubles/slack-api.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const SECRET = 'slack-signing-secret-serve-0123456789';

describe('docwright serve with a Slack app', () => {
  let slack: SlackApiDouble;
  let database: TestDatabase;
  let server: ServerProcess;

  before(async () => {
    [slack, database] = await Promise.all([startSlackApi(), createTestDatabase()]);
    server = await startServerProcess({
      ...database.env,
      DOCWRIGHT_SLACK_SIGNING_SECRET: SECRET,
      DOCWRIGHT_SLACK_BOT_TOKEN: slack.token,
      DOCWRIGHT_SLACK_API_URL: slack.apiUrl,
    });
  });
  after(async () => {
    await server?.stop();
    await Promise.all([slack?.close(), database?.drop()]);
  });

  test('a mention in an unlinked channel is acknowledged, then answered with how to link it', async () => {
    const ts = '1700000300.000100';
    const body = JSON.stringify(
      appMention({ eventId: 'Ev0SERVE1', channel: 'C0SERVE', text: '<@UBOT0DOCW> hello', ts }),
    );
    const response = await fetch(`${server.url}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signSlackRequest(SECRET, body) },
      body,
    });
    assert.equal(response.status, 200);
    const [reply] = await waitFor(
      () => (slack.thread('C0SERVE', ts).length > 0 ? slack.thread('C0SERVE', ts) : undefined),
      {
        timeoutMs: 20_000,
        message: () => server.output().slice(-2000),
      },
    );
    assert.match(reply!.text, /docwright slack link --project prj_… --channel C0SERVE/);
    assert.ok(!server.output().includes(slack.token), 'the bot token is never logged');
    assert.ok(!server.output().includes(SECRET), 'the signing secret is never logged');
  });
});
