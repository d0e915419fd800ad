// Who and what starts a follow-up from a pull request comment (docs/pull-request-comments.mdx),
// in process on each host's double: a user with write access on docwright's pull request does;
// a read-only user, docwright's own account, a comment without the mention and a comment on a
// pull request docwright did not open do not. A comment starts one follow-up however it arrives
// (hook, redelivery, poll); one that arrives while the job runs waits for it; a review comment
// carries its file, line and hunk; the replies are posted from durable state, redacted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pollComments } from '../../src/conversations/comments/comment-poll.ts';
import { AutomationLoop } from '../../src/worker/automation-loop.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { signedHeaders } from '../helpers/hook-deliveries.ts';
import { HOST_KINDS, type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';

for (const kind of HOST_KINDS) {
  describe(`pull request comments on ${kind}`, () => {
    let t: TestApp;
    let hosted: HostedRepository;
    let base: string;
    let projectId: string;
    let secret: string;
    let loop: AutomationLoop;
    let pull: { number: number; url: string };
    let jobId: string;
    const branch = 'docwright/comments-test';

    before(async () => {
      [t, hosted] = await Promise.all([
        startTestApp({ env: { DOCWRIGHT_PUBLIC_URL: 'http://docs.example.test' } }),
        startHostedRepository(kind, { 'index.mdx': '# Hello\n' }),
      ]);
      base = await t.listen();
      const project = await t.app.projects.create({
        name: 'docs',
        repository: hosted.repository,
        host: kind,
        apiUrl: hosted.apiUrl,
        token: hosted.token,
        ref: 'main',
      });
      projectId = project.id;
      secret = (await t.app.contextRepositories.newDocsWebhookSecret(projectId)).webhookSecret;
      loop = new AutomationLoop(t.app, { pollSeconds: 0, checkMs: 600_000 });
      pull = hosted.conversation.openPull(branch);
      jobId = (await t.app.jobs.create(projectId, { prompt: 'Write the docs' })).job.id;
      await finishRun(1, { prLink: pull.url });
      hosted.conversation.member('alice', 'write');
      hosted.conversation.member('rita', 'read');
    });
    after(async () => {
      await loop?.stop();
      await Promise.all([t?.close(), hosted?.close()]);
    });

    /** Ends run `seq` as a worker would (completed, with the pull request), without a model. */
    async function finishRun(seq: number, outcome: { prLink?: string; summary?: string; commit?: string }) {
      const { db } = t.app.store;
      const at = new Date().toISOString();
      const run = await db
        .updateTable('job_runs')
        .set({ status: 'succeeded', summary: outcome.summary ?? 'Done.', ended_at: at })
        .where('job_id', '=', jobId)
        .where('seq', '=', seq)
        .returning('id')
        .executeTakeFirstOrThrow();
      await db
        .updateTable('jobs')
        .set({
          status: 'completed',
          branch,
          summary: outcome.summary ?? 'Done.',
          updated_at: at,
          ...(outcome.prLink && { pr_link: outcome.prLink }),
        })
        .where('id', '=', jobId)
        .execute();
      if (outcome.commit) {
        await db
          .insertInto('run_diffs')
          .values({
            run_id: run.id,
            job_id: jobId,
            base_commit: '0'.repeat(40),
            head_commit: outcome.commit,
            diff: '',
            truncated: 0,
            files: 1,
            additions: 1,
            deletions: 0,
            created_at: at,
          })
          .execute();
      }
    }

    const runs = async () => (await t.app.jobHistory.runs(jobId)).map((r) => r.prompt);

    /** Sends the comment's hook and processes it; the delivery's result. */
    async function hook(comment: { event: string; payload: unknown }, deliveryId?: string) {
      const body = JSON.stringify(comment.payload);
      const response = await fetch(`${base}/hooks/${projectId}/docs`, {
        method: 'POST',
        headers: signedHeaders(kind, comment.event, body, secret, deliveryId),
        body,
      });
      assert.equal(response.status, 202);
      await loop.processDeliveries();
      const [latest] = await t.app.automations.deliveries.recent(projectId, { limit: 1 });
      return latest?.result ?? '';
    }

    const comment = (login: string, body: string, on = { ...pull, head: branch }) =>
      hosted.conversation.comment(on.number, login, body, { url: on.url, headRef: on.head });

    test('a read-only user, docwright itself, no mention, @docwrightbot and a foreign pull request start nothing', async () => {
      const cases: [string, ReturnType<typeof comment>, RegExp][] = [
        ['read-only', comment('rita', '@docwright fix the typo'), /rita may not write/],
        ['own', comment(hosted.conversation.self, '@docwright fix the typo'), /docwright’s own comment/],
        ['no mention', comment('alice', 'please fix the typo'), /no @docwright mention/],
        ['longer name', comment('alice', '@docwrightbot fix the typo'), /no @docwright mention/],
      ];
      const foreign = { ...hosted.conversation.openPull('someone/else'), head: 'someone/else' };
      cases.push([
        'foreign',
        comment('alice', '@docwright fix it', foreign),
        /not a pull request docwright opened/,
      ]);
      for (const [name, sent, reason] of cases) assert.match(await hook(sent), reason, name);
      // A host that cannot say who may write: the delivery says why, and starts nothing.
      // (Dave may only read: the poll that finds his comment later starts nothing either.)
      hosted.conversation.member('dave', 'read');
      hosted.api.failNext(401);
      assert.match(await hook(comment('dave', '@docwright fix the typo')), /^failed: host-auth-failed: /);
      assert.equal((await runs()).length, 1, 'no follow-up queued');
      const rows = await t.app.store.db.selectFrom('comment_follow_ups').select('id').execute();
      assert.deepEqual(rows, []);
      assert.deepEqual(
        hosted.conversation
          .commentsBy(hosted.conversation.self, pull.number)
          .filter((b) => !b.startsWith('@docwright')),
        [],
      );
    });

    test('one comment by hook, redelivery, a second delivery and the poll starts one follow-up; one meanwhile waits for the job', async () => {
      const sent = comment('alice', '@docwright: mention the CLI too');
      const id = crypto.randomUUID();
      assert.equal(await hook(sent, id), 'follow-up started');
      await hook(sent, id); // a redelivery stores nothing
      assert.match(await hook(sent), /received before/);
      const polled = await pollComments({
        db: t.app.store.db,
        comments: t.app.comments,
        hasDocsHook: async () => false,
        logger: t.app.logger,
        now: () => new Date(),
      });
      assert.equal(polled, 0);
      const prompts = await runs();
      assert.equal(prompts.length, 2, 'one follow-up');
      assert.match(prompts[1]!, /^mention the CLI too\n\n\(A comment by @alice on pull request #\d+\.\)$/);

      // While the follow-up runs, another comment waits, claimed, and starts when the job ends.
      const later = comment('alice', '@docwright and the API');
      assert.equal(await hook(later), 'waiting: job-busy');
      assert.equal(await t.app.comments.startWaiting(), 0);
      await finishRun(2, { summary: 'Mentions the CLI.', commit: 'a'.repeat(40) });
      assert.equal(await t.app.comments.startWaiting(), 1);
      assert.equal((await runs()).length, 3);
      assert.equal(await t.app.comments.startWaiting(), 0, 'started once');
    });

    test('replies: started with the job page, then the commit or no change with the reason, redacted; an archived job answers why', async () => {
      const self = hosted.conversation.self;
      assert.equal(await t.app.comments.postReplies(), 3, 'two started, one outcome');
      await finishRun(3, { summary: `Nothing to change; the token ${hosted.token} stays out.` });
      assert.equal(await t.app.comments.postReplies(), 1);
      const replies = hosted.conversation
        .commentsBy(self, pull.number)
        .filter((b) => !b.startsWith('@docwright'));
      assert.equal(replies.length, 4);
      const page = `http://docs.example.test/projects/${projectId}/jobs/${jobId}`;
      assert.ok(replies.filter((r) => r.includes('started follow-up job') && r.includes(page)).length === 2);
      assert.ok(
        replies.some(
          (r) => /pushed \[`aaaaaaaaaaaa`\]\(.*\/commit\/a{40}\)/.test(r) && r.includes('Mentions the CLI.'),
        ),
      );
      const none = replies.find((r) => r.startsWith('No change needed.'));
      assert.ok(none, replies.join('\n---\n'));
      assert.ok(!none.includes(hosted.token) && none.includes('[redacted]'), none);
      assert.equal(await t.app.comments.postReplies(), 0, 'each reply once');

      await t.app.jobs.archive(projectId, jobId);
      assert.equal(await hook(comment('alice', '@docwright once more')), 'refused: job-archived');
      assert.equal(await t.app.comments.postReplies(), 1);
      assert.match(hosted.conversation.commentsBy(self, pull.number).at(-1)!, /failed \(`job-archived`\)/);
      assert.deepEqual(hosted.violations(), []);
    });
  });
}
