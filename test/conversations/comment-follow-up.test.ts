// Pull request comments end to end (docs/pull-request-comments.mdx): `docwright serve` as a child
// process; a job opens a pull request on the host's double; a comment mentioning @docwright by a
// user with write access arrives at the docs hook, signed as the host signs it; the follow-up runs
// with a scripted model and pushes a new commit to the same branch; docwright replies in the
// thread, first "started" with the job page, then the new commit — on GitHub, GitLab and Gitea.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { signedHeaders } from '../helpers/hook-deliveries.ts';
import { HOST_KINDS, type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { mintlifySiteFiles, QUICKSTART_WELCOME } from '../helpers/mintlify-site.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const MODEL_KEY = 'sk-commentModelKey0123456789abcdefXYZ';
const PUBLIC_URL = 'http://docs.example.test';

interface Job {
  id: string;
  status: string;
  prLink: string | null;
  branch: string | null;
  summary: string | null;
  error: unknown;
}

for (const kind of HOST_KINDS) {
  describe(`a pull request comment on ${kind} starts a follow-up and is answered in its thread`, () => {
    let t: TestApp;
    let hosted: HostedRepository;
    let model: ScriptedServer;
    let server: ServerProcess;
    let tmp: string;
    let projectId: string;
    let key: string;
    let secret: string;

    before(async () => {
      [t, hosted, model] = await Promise.all([
        startTestApp(),
        startHostedRepository(kind, mintlifySiteFiles()),
        startOpenAIServer({ apiKey: MODEL_KEY }),
      ]);
      const project = await t.app.projects.create({
        name: `${kind} docs`,
        repository: hosted.repository,
        host: kind,
        apiUrl: hosted.apiUrl,
        token: hosted.token,
        ref: 'main',
        openaiCompatibleBaseUrl: model.url,
        openaiCompatibleApiKey: MODEL_KEY,
      });
      projectId = project.id;
      key = (await t.app.keys.create(projectId)).key;
      secret = (await t.app.contextRepositories.newDocsWebhookSecret(projectId)).webhookSecret;
      tmp = mkdtempSync(path.join(tmpdir(), 'docwright-comments-'));
      server = await startServerProcess({
        ...t.database.env,
        DOCWRIGHT_MODEL: 'openai-compatible/scripted',
        DOCWRIGHT_PUBLIC_URL: PUBLIC_URL,
        DOCWRIGHT_AUTOMATION_POLL_SECONDS: '0',
        DOCWRIGHT_LOG_LEVEL: 'info',
        TMPDIR: tmp,
      });
    });
    after(async () => {
      await server?.stop();
      await Promise.all([t?.close(), hosted?.close(), model?.close()]);
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    });

    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${server.url}/v2/agent/${projectId}${route}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = (await response.json()) as Job;
      assert.ok(response.ok, `${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
      return json;
    };
    const ended = (id: string, runs: number) =>
      waitFor(
        async () => {
          // The runs first: a job read before a follow-up is queued must not pass for its end.
          const all = await t.app.jobHistory.runs(id);
          if (all.length < runs || all.some((r) => r.ended_at === null)) return undefined;
          const job = await call('GET', `/job/${id}`);
          return job.status !== 'active' ? job : undefined;
        },
        { timeoutMs: 60_000, message: () => server.output().slice(-4000) },
      );

    test('the comment’s follow-up adds a commit to the same pull request; replies say started, then the commit', async () => {
      model.push(
        toolCall('read_file', { path: 'quickstart.mdx', limit: 20 }),
        toolCall('edit_file', {
          path: 'quickstart.mdx',
          old_string: QUICKSTART_WELCOME,
          new_string: QUICKSTART_WELCOME.replace('customize and update.', 'customize, update and share.'),
        }),
        toolCall('finish', { title: 'Mention sharing', summary: 'Adds sharing to the intro.' }),
      );
      const created = await call('POST', '/job', { prompt: 'Say that the site can be shared' });
      const first = await ended(created.id, 1);
      assert.equal(first.status, 'completed', JSON.stringify(first.error));
      const [pull] = hosted.pulls();
      assert.ok(pull && first.prLink && first.branch, JSON.stringify(first));
      const branch = first.branch;
      const before = hosted.git.git(hosted.name, 'rev-parse', branch).trim();

      hosted.conversation.member('alice', 'write');
      model.push(
        toolCall('read_file', { path: 'quickstart.mdx', limit: 20 }),
        toolCall('edit_file', {
          path: 'quickstart.mdx',
          old_string: 'update and share.',
          new_string: 'update and share with your team.',
        }),
        toolCall('finish', { title: 'Share with the team', summary: 'Names who to share with.' }),
      );
      const { event, payload } = hosted.conversation.comment(
        pull.number,
        'alice',
        '@DocWright, please say who to share it with',
        { url: first.prLink, headRef: branch },
      );
      const body = JSON.stringify(payload);
      const hook = await fetch(`${server.url}/hooks/${projectId}/docs`, {
        method: 'POST',
        headers: signedHeaders(kind, event, body, secret),
        body,
      });
      assert.equal(hook.status, 202);

      const again = await ended(created.id, 2);
      assert.equal(again.status, 'completed', JSON.stringify(again.error));
      assert.equal(again.prLink, first.prLink, 'the same pull request');
      assert.equal(hosted.pulls().length, 1, 'no second pull request');
      const after = hosted.git.git(hosted.name, 'rev-parse', branch).trim();
      assert.notEqual(after, before, 'a new commit on the same branch');
      assert.equal(
        hosted.git.git(hosted.name, 'log', '-1', '--format=%s', branch).trim(),
        'Share with the team',
      );
      // The model was told what the comment asked, without the mention, and who asked.
      const followUp = JSON.stringify(model.requests.at(-2)?.body);
      assert.match(followUp, /please say who to share it with/);
      assert.match(followUp, /@alice on pull request #/);
      assert.doesNotMatch(followUp, /@DocWright/);

      const replies = await waitFor(
        () => {
          const found = hosted.conversation.commentsBy(hosted.conversation.self, pull.number);
          return found.length >= 2 ? found : undefined;
        },
        { timeoutMs: 20_000, message: () => server.output().slice(-3000) },
      );
      assert.equal(replies.length, 2);
      assert.match(replies[0]!, /started follow-up job/);
      assert.ok(replies[0]!.includes(`${PUBLIC_URL}/projects/${projectId}/jobs/${created.id}`), replies[0]);
      assert.match(replies[1]!, new RegExp(`pushed \\[\`${after.slice(0, 12)}\`\\]`));
      assert.match(replies[1]!, /Names who to share with\./);
      assert.deepEqual(hosted.violations(), []);
      for (const text of [...replies, server.output()]) assert.ok(!text.includes(hosted.token), 'no token');
    });
  });
}
