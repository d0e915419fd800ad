// End to end on both databases: a mention in a linked Slack channel (signed, over HTTP) starts a
// job that the worker runs with a scripted model against a GitHub double and a real git server;
// the app answers in the message's thread with ONE status message, edited from "working" to the
// pull request link. A second mention in the thread is a follow-up: the same branch and pull
// request get a new commit, and the same message is edited again. A job that changes nothing
// says so, with its reason. A question (ending in `?`) is an ask job answered in the thread.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { SlackLoop } from '../../src/worker/slack-loop.ts';
import { Worker } from '../../src/worker/worker.ts';
import { httpError, type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { appMention, type SlackApiDouble, signSlackRequest, startSlackApi } from '../doubles/slack-api.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { waitFor } from '../helpers/worker.ts';

const MODEL_KEY = 'sk-slack-mention-test';
const SECRET = 'slack-signing-secret-mentions-0123456';
const CHANNEL = 'C0DOCS';

describe('Slack mentions run jobs and keep one status message', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let slack: SlackApiDouble;
  let repo: HostedRepository;
  let worker: Worker;
  let loop: SlackLoop;
  let url: string;
  let projectId: string;
  let events = 0;

  before(async () => {
    [slack, model, repo] = await Promise.all([
      startSlackApi(),
      startOpenAIServer({ apiKey: MODEL_KEY }),
      startHostedRepository('github', { 'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n' }),
    ]);
    t = await startTestApp({
      env: {
        DOCWRIGHT_MODEL: 'openai-compatible/scripted',
        DOCWRIGHT_PUBLIC_URL: 'https://docwright.acme.test',
        DOCWRIGHT_SLACK_SIGNING_SECRET: SECRET,
        DOCWRIGHT_SLACK_BOT_TOKEN: slack.token,
        DOCWRIGHT_SLACK_API_URL: slack.apiUrl,
      },
    });
    url = await t.listen();
    const project = await t.app.projects.create({
      name: 'Slack docs',
      repository: repo.repository,
      host: 'github',
      apiUrl: repo.apiUrl,
      token: repo.token,
      ref: 'main',
      openaiCompatibleBaseUrl: model.url,
      openaiCompatibleApiKey: MODEL_KEY,
    });
    projectId = project.id;
    await t.app.slack.links.link(projectId, CHANNEL, 'test');
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
    loop = new SlackLoop(t.app, { checkMs: 1_000, settleMs: 50 });
    loop.start();
  });
  after(async () => {
    await loop?.stop();
    await worker?.stop(0);
    await Promise.all([t?.close(), model?.close(), slack?.close(), repo?.close()]);
  });

  const mention = async (text: string, ts: string, threadTs?: string) => {
    const body = JSON.stringify(
      appMention({
        eventId: `Ev0MJ${++events}`,
        channel: CHANNEL,
        text: `<@${slack.botUserId}> ${text}`,
        ts,
        ...(threadTs && { threadTs }),
      }),
    );
    const started = performance.now();
    const response = await fetch(`${url}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signSlackRequest(SECRET, body) },
      body,
    });
    assert.equal(response.status, 200);
    assert.ok(performance.now() - started < 3_000, 'acknowledged well within 3 s');
  };
  const statusMessage = (threadTs: string, pattern: RegExp, versions = 0) =>
    waitFor(
      () => {
        const [message, ...more] = slack.thread(CHANNEL, threadTs);
        assert.deepEqual(more, [], 'one message in the thread');
        return message && pattern.test(message.text) && message.versions.length > versions
          ? message
          : undefined;
      },
      { timeoutMs: 60_000, message: () => JSON.stringify(slack.thread(CHANNEL, threadTs)) },
    );
  const threadJob = async (threadTs: string) =>
    (
      await t.app.store.db
        .selectFrom('slack_threads')
        .select('job_id')
        .where('thread_ts', '=', threadTs)
        .executeTakeFirstOrThrow()
    ).job_id;

  test('a mention → a job → its pull request link in the thread; a second mention → a new commit on the same pull request', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', { path: 'index.mdx', old_string: 'Welcome.', new_string: 'Welcome, readers.' }),
      toolCall('finish', { title: 'Greet readers', summary: 'A warmer welcome.' }),
    );
    const ts = '1700000100.000100';
    await mention('make the welcome warmer', ts);
    const done = await statusMessage(ts, /Pull request ready/);
    const jobId = await threadJob(ts);
    const job = await t.app.jobs.get(projectId, jobId);
    assert.equal(job.status, 'completed');
    assert.ok(job.prLink);
    assert.ok(done.text.includes(job.prLink), done.text);
    assert.match(done.text, /A warmer welcome\./);
    assert.match(
      done.versions[0]!,
      /Working on it… \(<https:\/\/docwright\.acme\.test\/projects\/prj_\w+\/jobs\/job_\w+\|job_\w+>\)/,
    );
    assert.equal(repo.pulls().length, 1);
    const events = await t.app.jobs.events(projectId, jobId, { limit: '5' });
    assert.equal((events[0]!.data as { prompt: string }).prompt, 'make the welcome warmer');

    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', {
        path: 'index.mdx',
        old_string: 'Welcome, readers.',
        new_string: 'Welcome, dear readers.',
      }),
      toolCall('finish', { title: 'Dearer readers', summary: 'Dearer still.' }),
    );
    const versions = done.versions.length;
    await mention('even warmer please', '1700000100.000900', ts);
    const again = await statusMessage(ts, /Pull request ready: .*\nDearer still\./, versions);
    assert.ok(
      again.versions.slice(versions).some((v) => /Working on it/.test(v)),
      `the message went back to working: ${JSON.stringify(again.versions)}`,
    );
    const followed = await t.app.jobs.get(projectId, jobId);
    assert.equal(followed.status, 'completed');
    assert.equal(followed.branch, job.branch, 'the same branch');
    assert.equal(followed.prLink, job.prLink, 'the same pull request');
    assert.equal(repo.pulls().length, 1);
    const log = repo.git
      .git(repo.name, 'log', '--format=%s', `main..${job.branch}`)
      .toString()
      .trim()
      .split('\n');
    assert.deepEqual(log, ['Dearer readers', 'Greet readers']);
    assert.equal(
      slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.thread_ts === ts).length,
      1,
    );
    assert.ok(slack.calls.every((c) => c.authorization === `Bearer ${slack.token}`));
  });

  test('a job that changes nothing says no change was needed, and why', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('finish', { title: 'Nothing to do', summary: 'The welcome already covers it.' }),
    );
    const ts = '1700000200.000100';
    await mention('is the welcome documented', ts);
    const done = await statusMessage(ts, /No change needed/);
    assert.match(done.text, /No change needed: The welcome already covers it\./);
  });

  test('a question is an ask job: the answer and its sources in the thread, nothing pushed', async () => {
    const pulls = repo.pulls().length;
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('answer', {
        text: 'The home page greets readers.',
        citations: [{ path: 'index.mdx', startLine: 5, endLine: 5 }],
      }),
    );
    const ts = '1700000250.000100';
    await mention('what does the home page say?', ts);
    const done = await statusMessage(ts, /speech_balloon/);
    assert.match(done.text, /The home page greets readers\.\n• `index\.mdx` lines 5–5/);
    const job = await t.app.jobs.get(projectId, await threadJob(ts));
    assert.equal(job.mode, 'ask');
    assert.equal(job.prLink, null);
    assert.equal(repo.pulls().length, pulls, 'no pull request');
  });

  test('a job that fails shows the failure’s code and message', async () => {
    model.push(httpError(401, { message: 'invalid api key' }));
    const ts = '1700000300.000100';
    await mention('rewrite the welcome', ts);
    const done = await statusMessage(ts, /Failed/);
    const job = await t.app.jobs.get(projectId, await threadJob(ts));
    assert.equal(job.status, 'failed');
    assert.ok(done.text.includes(`Failed (\`${job.error!.code}\`)`), done.text);
    assert.equal(job.error!.code, 'model-auth-failed');
  });
});
