// Every secret the process knows stays out of what a job emits (docs/security.mdx): a scripted
// model writes each kind — the project's and a context repository's tokens, the server's model
// keys and sealing key, Slack's tokens, the project's stored model key and GitHub App key, a
// webhook endpoint's `whsec_…` and the hook secrets — into its text, a tool call, its title and
// its summary; none reaches the events, the job record, the stored diff, the commit, the pull
// request (GitHub double) or the comment on the source pull request. A run that writes one into a
// file fails `secret-in-change`, naming the files, and pushes nothing; a page that held one before
// the run may still be edited.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { createGitRepository, type GitRepository } from '../doubles/git-repository.ts';
import { type GitHubApi, startGitHubApi } from '../doubles/github-api.ts';
import { reply, type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

const TOKEN = 'ghp_outputSecretsDocs0123456789abcdef';
const CONTEXT_TOKEN = 'ghp_outputSecretsCode0123456789abcdef';
/** The server's environment: model keys, Slack's tokens (docwright reads them later). */
const ENVIRONMENT = {
  ANTHROPIC_API_KEY: 'sk-ant-envAnthropicKey0123456789abcdef',
  OPENAI_API_KEY: 'sk-envOpenAIKey0123456789abcdefghij',
  DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY: 'envCompatibleKey0123456789abcdefXYZ',
  DOCWRIGHT_SLACK_BOT_TOKEN: 'xoxb-1234-5678-slackBotToken0123',
  DOCWRIGHT_SLACK_SIGNING_SECRET: 'slackSigningSecret0123456789abcdef',
};
const SEALING_KEY = 'output-secrets-sealing-key-0123456789';
const PROJECT_MODEL_KEY = 'sk-ant-projectStoredKey0123456789abcdef';
const PRIVATE_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;
/** A line of the key's body: a leak of the key shows in any one of them. */
const KEY_LINE = PRIVATE_KEY.split('\n')[3]!;

describe('every known secret stays out of what a job emits', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let githttp: GitHttpServer;
  let github: GitHubApi;
  let repo: GitRepository;
  let api: GitRepository;
  let apiPull: number;
  let worker: Worker;
  let projectId: string;
  /** Every secret by kind, filled in `before` (some are made by docwright). */
  const secrets: Record<string, string> = {};
  const savedEnv: Record<string, string | undefined> = {};
  const savedTmpdir = process.env.TMPDIR;
  let runTmp: string;

  before(async () => {
    runTmp = mkdtempSync(path.join(tmpdir(), 'docwright-output-secrets-tmp-'));
    process.env.TMPDIR = runTmp;
    for (const [name, value] of Object.entries(ENVIRONMENT)) {
      savedEnv[name] = process.env[name];
      process.env[name] = value;
    }
    [model, githttp, github] = await Promise.all([
      startOpenAIServer(),
      startGitHttpServer({
        tokens: { [TOKEN]: 'write', [CONTEXT_TOKEN]: 'read' },
        username: 'x-access-token',
      }),
      startGitHubApi({
        tokens: { [TOKEN]: { login: 'docs-bot', push: true }, [CONTEXT_TOKEN]: { login: 'code-bot' } },
      }),
    ]);
    repo = createGitRepository(
      {
        'docs/docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index', 'ci'] }] } })}\n`,
        'docs/index.mdx': '---\ntitle: Home\n---\n\nRun `api`.\n',
        // Someone pasted the push token into a page; the run takes it out (the diff's old side).
        'docs/ci.mdx': `---\ntitle: CI\n---\n\nSet the token:\n\n    token: ${TOKEN}\n`,
      },
      { dir: path.join(githttp.root, 'octo/docs.git') },
    );
    github.addRepo('octo/docs', { git: repo });
    api = createGitRepository(
      { 'src/export.ts': 'export function exportDocs() {}\n' },
      { dir: path.join(githttp.root, 'octo/api.git') },
    );
    github.addRepo('octo/api', { git: api });
    api.commit(
      'feature/format',
      { 'src/export.ts': 'export function exportDocs(format = "md") {}\n' },
      { from: 'main', message: 'Export takes a format' },
    );
    apiPull = github.openPull('octo/api', {
      head: 'feature/format',
      title: 'Export takes a format',
      user: 'octocat',
    }).number;
    t = await startTestApp({
      env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted', DOCWRIGHT_SECRET_KEY: SEALING_KEY },
    });
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: `${githttp.baseUrl}/octo/docs`,
      host: 'github',
      apiUrl: github.baseUrl,
      token: TOKEN,
      // Stored, never used by this project: a secret docwright knows all the same.
      githubPrivateKey: PRIVATE_KEY,
      anthropicApiKey: PROJECT_MODEL_KEY,
      ref: 'main',
      docsDir: 'docs',
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
      commentOnSource: true,
    });
    projectId = project.id;
    const context = await t.app.contextRepositories.add(projectId, {
      name: 'api',
      repository: `${githttp.baseUrl}/octo/api`,
      host: 'github',
      apiUrl: github.baseUrl,
      token: CONTEXT_TOKEN,
    });
    const endpoint = await t.app.webhooks.createEndpoint(projectId, {
      url: 'https://hooks.example.com/docwright',
    });
    const docsHook = await t.app.contextRepositories.newDocsWebhookSecret(projectId);
    Object.assign(secrets, ENVIRONMENT, {
      projectToken: TOKEN,
      contextToken: CONTEXT_TOKEN,
      sealingKey: SEALING_KEY,
      projectModelKey: PROJECT_MODEL_KEY,
      githubPrivateKey: KEY_LINE,
      webhookEndpoint: endpoint.secret,
      docsHook: docsHook.webhookSecret,
      contextHook: context.webhookSecret,
    });
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker?.stop(0);
    await Promise.all([t?.close(), model?.close(), githttp?.close(), github?.close()]);
    repo?.close();
    api?.close();
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    rmSync(runTmp, { recursive: true, force: true });
  });

  /** The kinds of secret `text` holds (raw or base64), for a message that names no secret. */
  const leaked = (text: string) =>
    Object.entries(secrets)
      .filter(([, secret]) => text.includes(secret) || text.includes(Buffer.from(secret).toString('base64')))
      .map(([kind]) => kind);
  /** Every secret on one line, with the whole private key besides. */
  const everySecret = () => `${Object.values(secrets).join(' , ')}\n${PRIVATE_KEY}`;
  const ended = (id: string) =>
    waitFor(
      async () => {
        const job = await t.app.jobs.get(projectId, id);
        return job.status === 'active' ? undefined : job;
      },
      { timeoutMs: 60_000 },
    );

  test('text, a tool call, the title and the summary: redacted in events, record, diff, commit, PR and comment', async () => {
    model.push(
      {
        ...reply(`I know these: ${everySecret()}`),
        toolCalls: [{ name: 'list_files', input: { path: `docs/${Object.values(secrets).join('-')}` } }],
      },
      toolCall('read_file', { path: 'docs/ci.mdx' }),
      toolCall('edit_file', {
        path: 'docs/ci.mdx',
        old_string: `    token: ${TOKEN}`,
        new_string: '    token: the DOCS_TOKEN secret',
      }),
      toolCall('finish', {
        title: `Use ${secrets.DOCWRIGHT_SLACK_BOT_TOKEN} ${secrets.docsHook}`.slice(0, 100),
        summary: `Moved the token to a secret. Known: ${everySecret()}`,
      }),
    );
    const id = (
      await t.app.jobs.create(projectId, {
        prompt: 'Take the token off the CI page',
        changes: [{ repository: 'api', pullRequest: apiPull }],
      })
    ).job.id;
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.ok(done.branch && done.prLink, 'a pull request was opened');

    const events = JSON.stringify(await t.app.jobs.events(projectId, id, { limit: 1000 }));
    assert.match(
      events,
      /I know these: \[redacted\]/,
      'the scenario carried the secrets into the transcript',
    );
    assert.deepEqual(leaked(events), [], 'events');
    assert.match(done.summary ?? '', /Known: \[redacted\]/);
    assert.deepEqual(leaked(JSON.stringify(done)), [], 'job record');
    const diff = await t.app.jobs.diff(projectId, id);
    assert.match(diff.diff, /^- {4}token: \[redacted\]$/m, 'the removed line is in the diff, redacted');
    assert.deepEqual(leaked(diff.diff), [], 'stored diff');
    const commit = repo.git(['log', '-1', '--format=%B', done.branch]);
    assert.match(commit, /\[redacted\]/);
    assert.deepEqual(leaked(commit), [], 'commit message');
    const pull = github.repo('octo/docs').pulls.find((p) => p.head === done.branch);
    assert.ok(pull);
    assert.deepEqual(leaked(`${pull.title}\n${pull.body}`), [], 'pull request');
    const comments = github.repo('octo/api').comments.filter((c) => c.issue === apiPull);
    assert.equal(comments.length, 1);
    assert.match(comments[0]!.body, /\[redacted\]/);
    assert.deepEqual(leaked(comments[0]!.body), [], 'source pull request comment');
  });

  test('a secret written into a file fails the job secret-in-change, naming the files, and pushes nothing', async () => {
    const pages = Object.keys(secrets).map((kind) => `setup-${kind}`);
    const files = pages.map((page) => `docs/${page}.md`);
    model.push(
      ...Object.entries(secrets).map(([kind, secret]) =>
        toolCall('write_file', {
          path: `docs/setup-${kind}.md`,
          content: `# Setup\n\nUse ${kind === 'githubPrivateKey' ? PRIVATE_KEY : secret} here.\n`,
        }),
      ),
      // The pages are in the navigation: nothing but the secrets stands in the way.
      toolCall('read_file', { path: 'docs/docs.json' }),
      toolCall('write_file', {
        path: 'docs/docs.json',
        content: `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index', 'ci', ...pages] }] } })}\n`,
      }),
      toolCall('finish', { title: 'Add the setup values', summary: 'Adds them.' }),
    );
    const refsBefore = repo.git(['for-each-ref', '--format=%(refname)']);
    const pullsBefore = github.repo('octo/docs').pulls.length;
    const id = (await t.app.jobs.create(projectId, { prompt: 'Write the setup pages' })).job.id;
    const done = await ended(id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'secret-in-change', done.error?.message);
    for (const file of files)
      assert.ok(done.error?.message.includes(file), `${file} is named: ${done.error?.message}`);
    assert.deepEqual(leaked(JSON.stringify(done)), [], 'job record');
    assert.deepEqual(
      leaked(JSON.stringify(await t.app.jobs.events(projectId, id, { limit: 1000 }))),
      [],
      'events',
    );
    assert.equal(done.branch, null);
    assert.equal(repo.git(['for-each-ref', '--format=%(refname)']), refsBefore, 'nothing was pushed');
    assert.equal(github.repo('octo/docs').pulls.length, pullsBefore, 'no pull request');
  });

  test('a page that already held a secret may still be edited; the diff shows it redacted', async () => {
    model.push(
      toolCall('read_file', { path: 'docs/ci.mdx' }),
      toolCall('edit_file', {
        path: 'docs/ci.mdx',
        old_string: 'Set the token:',
        new_string: 'Set the push token:',
      }),
      toolCall('finish', { title: 'Say which token', summary: 'Names the push token.' }),
    );
    const id = (await t.app.jobs.create(projectId, { prompt: 'Say which token' })).job.id;
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.ok(done.branch, 'pushed: the token was on the page before the run');
    const diff = (await t.app.jobs.diff(projectId, id)).diff;
    assert.match(diff, /^\+Set the push token:$/m);
    assert.match(diff, /^ {5}token: \[redacted\]$/m, 'the context line is redacted');
    assert.deepEqual(leaked(diff), [], 'stored diff');
  });

  test('a secret where a long text is cut for its event is left out whole, never shown in part', async () => {
    // The text is cut at 2,000 characters for the transcript; the token would straddle the cut.
    const text = `${'word '.repeat(398)}${TOKEN} and more`;
    assert.ok(text.indexOf(TOKEN) < 2_000 && text.indexOf(TOKEN) + TOKEN.length > 2_000);
    model.push({
      ...reply(text),
      toolCalls: [{ name: 'finish', input: { title: 'Nothing', summary: 'Nothing to do.' } }],
    });
    const id = (await t.app.jobs.create(projectId, { prompt: 'Say it' })).job.id;
    const done = await ended(id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const events = await t.app.jobs.events(projectId, id, { limit: 1000 });
    const said = JSON.stringify(events.filter((e) => e.type === 'agent.text').map((e) => e.data));
    assert.ok(
      !said.includes(TOKEN.slice(0, 8)),
      `part of the token is in the transcript: ${said.slice(-200)}`,
    );
    assert.match(said, /word … \[\d+ more characters\]/, 'the text was cut before the token');
  });
});
