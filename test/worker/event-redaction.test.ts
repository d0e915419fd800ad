// A run that really meets a secret: the repository itself holds the project's token (a setup page
// someone pasted it into), the model reads that page, quotes it and edits it away. Every place
// the token passes through the run — the tool result, the model's text, the edit's input — is
// recorded, and must be recorded redacted.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { reply, type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { HOST_TOKENS, type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { waitFor } from '../helpers/worker.ts';

const LEAKED = `  token: ${HOST_TOKENS.github}`;

describe('job events of a run that handles a secret', () => {
  let t: TestApp;
  let hosted: HostedRepository;
  let model: ScriptedServer;
  let worker: Worker;
  let projectId: string;
  const savedTmpdir = process.env.TMPDIR;
  let runTmp: string;
  before(async () => {
    runTmp = mkdtempSync(path.join(tmpdir(), 'docwright-redaction-tmp-'));
    process.env.TMPDIR = runTmp;
    model = await startOpenAIServer();
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
    hosted = await startHostedRepository('github', {
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index', 'ci'] }] } }, null, 2)}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
      // The page holds the very token the project pushes with.
      'ci.mdx': `---\ntitle: CI\n---\n\nSet \`DOCS_TOKEN\` in the workflow:\n\n${LEAKED}\n`,
    });
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: hosted.repository,
      host: 'github',
      apiUrl: hosted.apiUrl,
      token: hosted.token,
      ref: 'main',
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    projectId = project.id;
    worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    worker.start();
  });
  after(async () => {
    await worker?.stop(0);
    await Promise.all([t?.close(), hosted?.close(), model?.close()]);
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    rmSync(runTmp, { recursive: true, force: true });
  });

  test('the token read from a file, quoted by the model and sent in an edit is recorded as [redacted]', async () => {
    model.push(
      toolCall('read_file', { path: 'ci.mdx' }),
      {
        ...reply(`The page shows a real token (${hosted.token}); I will replace it with the secret's name.`),
        toolCalls: [
          {
            name: 'edit_file',
            input: { path: 'ci.mdx', old_string: LEAKED, new_string: '  token: the DOCS_TOKEN secret' },
          },
        ],
      },
      toolCall('finish', {
        title: 'Remove a token from the CI page',
        summary: 'The page names the secret instead.',
      }),
    );
    const created = await t.app.jobs.create(projectId, { prompt: 'Take the token off the CI page' });
    const id = created.job.id;
    const done = await waitFor(
      async () => {
        const job = await t.app.jobs.get(projectId, id);
        return job.status === 'active' ? undefined : job;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const events = await t.app.jobs.events(projectId, id, { limit: 1000 });
    const byType = (type: string) => JSON.stringify(events.filter((e) => e.type === type).map((e) => e.data));
    // The scenario did carry the token through each of these; each holds the redaction instead.
    assert.match(byType('agent.tool_result'), /token: \[redacted\]/);
    assert.match(byType('agent.text'), /a real token \(\[redacted\]\)/);
    assert.match(byType('agent.tool_call'), /token: \[redacted\]/);
    const forms = [hosted.token, Buffer.from(hosted.token).toString('base64')];
    for (const form of forms)
      assert.ok(!JSON.stringify(events).includes(form), 'a form of the token is in an event');
    assert.ok(!hosted.git.git(hosted.name, 'show', `${done.branch}:ci.mdx`).includes(hosted.token));
  });
});
