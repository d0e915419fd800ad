// POST /slack/events and the background loop, on both databases: Slack's v0 signature (a bad
// one or an old timestamp → 401 and nothing stored), url_verification, each event id stored and
// processed once (Slack's retries, two processes on one database), bots and the app itself
// ignored, an unlinked channel told how to link, a mention while the thread's job works → busy.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type App, openApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { SlackLoop } from '../../src/worker/slack-loop.ts';
import { appMention, type SlackApiDouble, signSlackRequest, startSlackApi } from '../doubles/slack-api.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

const SECRET = 'slack-signing-secret-events-test-0123';

describe('POST /slack/events', () => {
  let slack: SlackApiDouble;
  let t: TestApp;
  let url: string;
  let p: SeededProject;
  let eventCounter = 0;
  const nextEventId = () => `Ev0TEST${String(++eventCounter).padStart(4, '0')}`;
  let tsCounter = 1_700_000_000;
  const nextTs = () => `${++tsCounter}.000200`;
  const env = () => ({
    DOCWRIGHT_SLACK_SIGNING_SECRET: SECRET,
    DOCWRIGHT_SLACK_BOT_TOKEN: slack.token,
    DOCWRIGHT_SLACK_API_URL: slack.apiUrl,
  });

  before(async () => {
    slack = await startSlackApi();
    t = await startTestApp({ env: env() });
    url = await t.listen();
    p = await seedProject(t.app);
    await t.app.slack.links.link(p.projectId, 'C0LINKED', 'test');
  });
  after(async () => {
    await t?.close();
    await slack?.close();
  });

  const post = (body: string, headers: Record<string, string> = signSlackRequest(SECRET, body)) =>
    fetch(`${url}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  const storedEvents = () => t.app.store.db.selectFrom('slack_events').selectAll().execute();
  const loop = async (app: App = t.app) => {
    const l = new SlackLoop(app, { checkMs: 60_000 });
    await l.runPass();
    return l;
  };

  test('url_verification is answered with the challenge', async () => {
    const body = JSON.stringify({ token: 'x', challenge: 'c7f3a9-challenge', type: 'url_verification' });
    const response = await post(body);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { challenge: 'c7f3a9-challenge' });
  });

  test('a bad, missing or old signature is 401 and stores nothing', async () => {
    const before = (await storedEvents()).length;
    const body = JSON.stringify(
      appMention({ eventId: nextEventId(), channel: 'C0LINKED', text: '<@UBOT0DOCW> hi', ts: nextTs() }),
    );
    const wrong = await post(body, signSlackRequest('another-secret', body));
    assert.equal(wrong.status, 401);
    const problem = (await wrong.json()) as { code: string; detail: string };
    assert.equal(problem.code, 'unauthorized');
    assert.ok(!JSON.stringify(problem).includes(SECRET));
    assert.equal((await post(body, {})).status, 401, 'unsigned');
    const old = signSlackRequest(SECRET, body, Math.floor(Date.now() / 1000) - 6 * 60);
    assert.equal((await post(body, old)).status, 401, 'signed six minutes ago');
    const tampered = signSlackRequest(SECRET, body);
    assert.equal((await post(body.replace('hi', 'ho'), tampered)).status, 401, 'body changed after signing');
    assert.equal((await storedEvents()).length, before, 'nothing stored');
  });

  test('a body over the bound is 413 before anything is stored', async () => {
    const body = JSON.stringify({
      type: 'event_callback',
      event_id: nextEventId(),
      pad: 'x'.repeat(600 * 1024),
    });
    const response = await post(body);
    assert.equal(response.status, 413);
  });

  test('an event id is stored and processed once: retries and two processes on one database', async () => {
    const eventId = nextEventId();
    const ts = nextTs();
    const body = JSON.stringify(
      appMention({ eventId, channel: 'C0UNLINKED', text: '<@UBOT0DOCW> fix it', ts }),
    );
    const first = await post(body);
    assert.equal(first.status, 200);
    assert.deepEqual(await first.json(), { ok: true, duplicate: false });
    // Slack's retries (X-Slack-Retry-Num), sequential and at once.
    const retries = await Promise.all(
      [1, 2, 3].map((n) =>
        post(body, {
          ...signSlackRequest(SECRET, body),
          'x-slack-retry-num': String(n),
          'x-slack-retry-reason': 'http_timeout',
        }),
      ),
    );
    for (const r of retries) assert.deepEqual(await r.json(), { ok: true, duplicate: true });
    assert.equal((await storedEvents()).filter((e) => e.event_id === eventId).length, 1);

    // A second process on the same database processes beside the first: one answer only.
    const other = await openApp(loadConfig({ ...t.database.env, ...env(), DOCWRIGHT_LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
      migrate: false,
    });
    // A slow Slack keeps each pass inside its answer long enough for the others to look too.
    slack.delay(200);
    try {
      await Promise.all([loop(t.app), loop(other), loop(t.app)]);
    } finally {
      slack.delay(0);
      await other.close();
    }
    const replies = slack.thread('C0UNLINKED', ts);
    assert.equal(replies.length, 1, JSON.stringify(replies));
    assert.match(replies[0]!.text, /not linked to a docwright project/);
    assert.match(replies[0]!.text, /\/docwright link prj_…/);
    assert.match(replies[0]!.text, /docwright slack link --project prj_… --channel C0UNLINKED/);
    const [row] = (await storedEvents()).filter((e) => e.event_id === eventId);
    assert.equal(row!.result, 'ignored: channel not linked (told how to link it)');
  });

  test('messages of bots and of the app itself start nothing and get no answer', async () => {
    const posted = slack.messages.length;
    const jobsBefore = (await t.app.jobs.list(p.projectId, {})).jobs.length;
    for (const event of [
      appMention({
        eventId: nextEventId(),
        channel: 'C0LINKED',
        text: '<@UBOT0DOCW> loop',
        ts: nextTs(),
        botId: 'B0OTHER',
      }),
      appMention({
        eventId: nextEventId(),
        channel: 'C0LINKED',
        text: '<@UBOT0DOCW> me',
        ts: nextTs(),
        user: 'UBOT0DOCW',
      }),
    ]) {
      assert.equal((await post(JSON.stringify(event))).status, 200);
    }
    await loop();
    assert.equal(slack.messages.length, posted);
    assert.equal((await t.app.jobs.list(p.projectId, {})).jobs.length, jobsBefore);
    const results = (await storedEvents()).slice(-2).map((e) => e.result);
    assert.deepEqual(results, ['ignored: from a bot', 'ignored: own message']);
  });

  test('a mention in a linked channel creates one job and a status message; another while it works is told busy', async () => {
    const ts = nextTs();
    const eventId = nextEventId();
    const body = JSON.stringify(
      appMention({ eventId, channel: 'C0LINKED', text: '<@UBOT0DOCW> document the &lt;Card&gt; props', ts }),
    );
    assert.equal((await post(body)).status, 200);
    await loop();
    const [thread] = await t.app.store.db
      .selectFrom('slack_threads')
      .selectAll()
      .where('thread_ts', '=', ts)
      .execute();
    assert.ok(thread, 'thread recorded');
    const job = await t.app.jobs.get(p.projectId, thread.job_id);
    assert.equal(job.status, 'active');
    const events = await t.app.jobs.events(p.projectId, job.id, { limit: '10' });
    assert.equal((events[0]!.data as { prompt: string }).prompt, 'document the <Card> props');
    const status = slack.thread('C0LINKED', ts);
    assert.equal(status.length, 1);
    assert.match(status[0]!.text, /Working on it/);

    // No worker runs here: the job stays active, and a mention in its thread is answered busy.
    const again = JSON.stringify(
      appMention({
        eventId: nextEventId(),
        channel: 'C0LINKED',
        text: '<@UBOT0DOCW> and the Tabs',
        ts: nextTs(),
        threadTs: ts,
      }),
    );
    assert.equal((await post(again)).status, 200);
    await loop();
    const replies = slack.thread('C0LINKED', ts);
    assert.equal(replies.length, 2);
    assert.match(replies[1]!.text, /still working on this thread’s last instruction/);
    assert.equal((await t.app.jobs.list(p.projectId, {})).jobs.filter((j) => j.id === job.id).length, 1);
    const runs = await t.app.store.db
      .selectFrom('job_runs')
      .select('seq')
      .where('job_id', '=', job.id)
      .execute();
    assert.equal(runs.length, 1, 'no follow-up run was queued');
  });

  test('Slack refusing the answer (the app is not in the channel) ends the event, saying so', async () => {
    const eventId = nextEventId();
    slack.failNext('chat.postMessage', 'not_in_channel');
    const body = JSON.stringify(
      appMention({ eventId, channel: 'C0ELSEWHERE', text: '<@UBOT0DOCW> hi', ts: nextTs() }),
    );
    assert.equal((await post(body)).status, 200);
    await loop();
    const [row] = (await storedEvents()).filter((e) => e.event_id === eventId);
    assert.equal(row!.result, 'failed: Slack answered not_in_channel');
    assert.ok(row!.processed_at);
  });

  test('a mention the rate limit refuses is answered in the thread with why, and starts nothing', async () => {
    const limited = await seedProject(t.app, { rateLimit: 1 });
    await t.app.slack.links.link(limited.projectId, 'C0LIMITED', 'test');
    await t.app.jobs.create(limited.projectId, { prompt: 'uses the one use of the hour' });
    const ts = nextTs();
    const eventId = nextEventId();
    assert.equal(
      (
        await post(
          JSON.stringify(appMention({ eventId, channel: 'C0LIMITED', text: '<@UBOT0DOCW> more', ts })),
        )
      ).status,
      200,
    );
    await loop();
    const [reply] = slack.thread('C0LIMITED', ts);
    assert.match(reply!.text, /:warning: I could not start that: .*rate limit/i);
    assert.equal((await t.app.jobs.list(limited.projectId, {})).jobs.length, 1);
    const [row] = (await storedEvents()).filter((e) => e.event_id === eventId);
    assert.equal(row!.result, 'refused: rate-limited');
  });

  test('an event processed again after a crash creates no second job (the event id is the Idempotency-Key)', async () => {
    const ts = nextTs();
    const eventId = nextEventId();
    assert.equal(
      (
        await post(
          JSON.stringify(appMention({ eventId, channel: 'C0LINKED', text: '<@UBOT0DOCW> tidy', ts })),
        )
      ).status,
      200,
    );
    await loop();
    const jobs = (await t.app.jobs.list(p.projectId, {})).jobs.length;
    // As if the process had died after creating the job: the event waits again.
    await t.app.store.db
      .updateTable('slack_events')
      .set({ processed_at: null, claimed_until: null, result: null })
      .where('event_id', '=', eventId)
      .execute();
    await loop();
    assert.equal((await t.app.jobs.list(p.projectId, {})).jobs.length, jobs);
    assert.equal(slack.thread('C0LINKED', ts).length, 1, 'one status message');
  });
});

describe('POST /slack/events without a signing secret', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  test('answers 404, saying what to set', async () => {
    const url = await t.listen();
    const body = '{"type":"url_verification","challenge":"x"}';
    for (const route of ['/slack/events', '/slack/commands']) {
      const response = await fetch(`${url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signSlackRequest('x', body) },
        body,
      });
      assert.equal(response.status, 404, route);
      const problem = (await response.json()) as { detail: string };
      assert.match(problem.detail, /DOCWRIGHT_SLACK_SIGNING_SECRET/);
    }
  });
});
