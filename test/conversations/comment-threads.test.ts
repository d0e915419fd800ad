// Review comments and concurrency (docs/pull-request-comments.mdx): a review comment on a line
// gives the follow-up its file, line and diff hunk, and docwright answers in that comment's
// thread (GitHub) or discussion (GitLab); two server processes sharing one database that both
// receive the same comment start one follow-up.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AutomationLoop } from '../../src/worker/automation-loop.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { signedHeaders } from '../helpers/hook-deliveries.ts';
import { type HostedRepository, type HostKind, startHostedRepository } from '../helpers/hosts.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const HUNK = '@@ -10,3 +10,3 @@\n Intro\n-Old line\n+Use `docwright init` to start.';

/** A project on `kind` whose job opened a pull request (its run ended as a worker would end it). */
async function docwrightPull(t: TestApp, hosted: HostedRepository, kind: HostKind) {
  const project = await t.app.projects.create({
    name: 'docs',
    repository: hosted.repository,
    host: kind,
    apiUrl: hosted.apiUrl,
    token: hosted.token,
    ref: 'main',
  });
  const secret = (await t.app.contextRepositories.newDocsWebhookSecret(project.id)).webhookSecret;
  const branch = 'docwright/threads';
  const pull = hosted.conversation.openPull(branch);
  const jobId = (await t.app.jobs.create(project.id, { prompt: 'Write the docs' })).job.id;
  const at = new Date().toISOString();
  await t.app.store.db
    .updateTable('job_runs')
    .set({ status: 'succeeded', summary: 'Done.', ended_at: at })
    .where('job_id', '=', jobId)
    .execute();
  await t.app.store.db
    .updateTable('jobs')
    .set({ status: 'completed', branch, pr_link: pull.url, summary: 'Done.', updated_at: at })
    .where('id', '=', jobId)
    .execute();
  hosted.conversation.member('alice', 'write');
  return { projectId: project.id, secret, branch, pull, jobId };
}

const post = (url: string, kind: HostKind, sent: { event: string; payload: unknown }, secret: string) => {
  const body = JSON.stringify(sent.payload);
  return fetch(url, { method: 'POST', headers: signedHeaders(kind, sent.event, body, secret), body });
};

for (const kind of ['github', 'gitlab'] as const) {
  describe(`a review comment on ${kind}`, () => {
    let t: TestApp;
    let hosted: HostedRepository;
    before(async () => {
      [t, hosted] = await Promise.all([
        startTestApp(),
        startHostedRepository(kind, { 'index.mdx': '# Hi\n' }),
      ]);
    });
    after(async () => {
      await Promise.all([t?.close(), hosted?.close()]);
    });

    test('carries its file, line (and hunk) to the follow-up, and is answered in its thread', async () => {
      const base = await t.listen();
      const { projectId, secret, branch, pull, jobId } = await docwrightPull(t, hosted, kind);
      const sent = hosted.conversation.comment(
        pull.number,
        'alice',
        '@docwright say where the command comes from',
        { url: pull.url, headRef: branch },
        { path: 'docs/quickstart.mdx', line: 12, diffHunk: HUNK },
      );
      assert.equal((await post(`${base}/hooks/${projectId}/docs`, kind, sent, secret)).status, 202);
      await new AutomationLoop(t.app, { pollSeconds: 0 }).processDeliveries();
      const runs = await t.app.jobHistory.runs(jobId);
      assert.equal(runs.length, 2);
      const prompt = runs[1]!.prompt;
      assert.match(prompt, /^say where the command comes from\n/);
      assert.match(prompt, /on pull request #\d+ on docs\/quickstart\.mdx, line 12\./);
      // GitLab's notes carry no hunk; GitHub's review comments do.
      if (kind === 'github') assert.ok(prompt.includes(`\`\`\`diff\n${HUNK}\n\`\`\``), prompt);
      assert.equal(await t.app.comments.postReplies(), 1);
      const [place] = hosted.conversation.replyPlaces(pull.number);
      assert.equal(
        place,
        kind === 'github' ? `thread ${sent.id}` : place?.startsWith('discussion ') ? place : 'x',
      );
      assert.deepEqual(hosted.violations(), []);
    });
  });
}

describe('two server processes sharing the database receive the same comment', () => {
  let t: TestApp;
  let hosted: HostedRepository;
  const servers: ServerProcess[] = [];
  before(async () => {
    [t, hosted] = await Promise.all([
      startTestApp(),
      startHostedRepository('github', { 'index.mdx': '# Hi\n' }),
    ]);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all([t?.close(), hosted?.close()]);
  });

  test('one follow-up starts', async () => {
    const { projectId, secret, branch, pull, jobId } = await docwrightPull(t, hosted, 'github');
    const env = { ...t.database.env, DOCWRIGHT_AUTOMATION_POLL_SECONDS: '0', DOCWRIGHT_LOG_LEVEL: 'info' };
    servers.push(
      ...(await Promise.all([
        startServerProcess(env, ['--no-worker']),
        startServerProcess(env, ['--no-worker']),
      ])),
    );
    const sent = hosted.conversation.comment(pull.number, 'alice', '@docwright add an example', {
      url: pull.url,
      headRef: branch,
    });
    const answers = await Promise.all(
      servers.map((s) => post(`${s.url}/hooks/${projectId}/docs`, 'github', sent, secret)),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      [202, 202],
    );
    const results = await waitFor(
      async () => {
        const rows = await t.app.automations.deliveries.recent(projectId);
        return rows.length === 2 && rows.every((r) => r.result !== null)
          ? rows.map((r) => r.result)
          : undefined;
      },
      { timeoutMs: 20_000, message: () => servers.map((s) => s.output().slice(-2000)).join('\n') },
    );
    // Each process processes what waits, its own deliveries and the other's: the claim decides.
    assert.ok(
      results.every((r) => /^(follow-up started|ignored: the comment was received before)/.test(r ?? '')),
      JSON.stringify(results),
    );
    // A process records `received before` on a delivery while the other may still be committing
    // the follow-up it claimed: the claim is read once it has left `waiting`.
    const claims = await waitFor(async () => {
      const rows = await t.app.store.db
        .selectFrom('comment_follow_ups')
        .select(['status', 'run_seq'])
        .execute();
      return rows.some((row) => row.status === 'waiting') ? undefined : rows;
    });
    assert.deepEqual(claims, [{ status: claims[0]?.status === 'done' ? 'done' : 'started', run_seq: 2 }]);
    assert.equal((await t.app.jobHistory.runs(jobId)).length, 2, 'one follow-up run');
    // Its replies are posted once, whichever process posts them.
    const replies = await waitFor(() => {
      const found = hosted.conversation.commentsBy(hosted.conversation.self, pull.number);
      return found.length >= 1 ? found : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(
      hosted.conversation.commentsBy(hosted.conversation.self, pull.number).length,
      1,
      replies.join('\n'),
    );
  });
});

for (const kind of ['github', 'gitlab', 'gitea'] as const) {
  describe(`without a docs hook on ${kind}, the poll`, () => {
    let t: TestApp;
    let hosted: HostedRepository;
    before(async () => {
      [t, hosted] = await Promise.all([
        startTestApp(),
        startHostedRepository(kind, { 'index.mdx': '# Hi\n' }),
      ]);
    });
    after(async () => {
      await Promise.all([t?.close(), hosted?.close()]);
    });

    test('finds a new comment and starts its follow-up, once; older and foreign comments start nothing', async () => {
      const { projectId, branch, pull, jobId } = await docwrightPull(t, hosted, kind);
      // This project polls: it has no docs hook secret.
      await t.app.store.db
        .updateTable('projects')
        .set({ docs_webhook_secret: null })
        .where('id', '=', projectId)
        .execute();
      hosted.conversation.comment(pull.number, 'alice', 'thanks!', { url: pull.url, headRef: branch });
      hosted.conversation.comment(pull.number, 'alice', '@docwright link the API page', {
        url: pull.url,
        headRef: branch,
      });
      assert.equal(await t.app.comments.poll(), 1);
      assert.equal(await t.app.comments.poll(), 0, 'the cursor and the claim: once');
      const runs = await t.app.jobHistory.runs(jobId);
      assert.equal(runs.length, 2);
      assert.match(runs[1]!.prompt, /^link the API page\n/);
      assert.equal(await t.app.comments.postReplies(), 1);
      assert.equal(hosted.conversation.replyPlaces(pull.number).length, 1);
      assert.deepEqual(hosted.violations(), []);
    });
  });
}
