// `docwright mcp` (docs/mcp.mdx) as a coding agent uses it: the MCP SDK's own client starts the
// server as a stdio process, which talks over HTTP to a `docwright serve` process whose agent
// runs on the scripted model against a local repository.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentJob } from '../../src/client/types.ts';
import { MAX_PROMPT_CHARS, MAX_WAIT_SECONDS } from '../../src/mcp/server.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { cleanEnv, runCli, type ServerProcess, startServerProcess } from '../helpers/process.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

/** The summary line and the JSON of a tool result. */
function parts<T>(result: unknown): { summary: string; value: T; isError: boolean } {
  const { content, isError } = result as CallToolResult;
  const texts = content.map((c) => (c.type === 'text' ? c.text : ''));
  return {
    summary: texts[0]!,
    value: texts[1] === undefined ? (undefined as T) : JSON.parse(texts[1]),
    isError: isError === true,
  };
}

describe('docwright mcp through the MCP SDK client', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let server: ServerProcess;
  let repo: string;
  let projectId: string;
  let key: string;
  let client: Client;
  let stderr = '';

  before(async () => {
    [t, model] = await Promise.all([startTestApp(), startOpenAIServer()]);
    repo = createGitRepository({
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
    });
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: repo,
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    projectId = project.id;
    key = (await t.app.keys.create(projectId)).key;
    server = await startServerProcess({
      ...t.database.env,
      DOCWRIGHT_MODEL: 'openai-compatible/scripted',
      // The API takes longer prompts than the MCP tools do: only the tools' own bound can refuse them.
      DOCWRIGHT_PROMPT_MAX_CHARS: String(2 * MAX_PROMPT_CHARS),
    });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      env: {
        ...(cleanEnv() as Record<string, string>),
        DOCWRIGHT_URL: server.url,
        DOCWRIGHT_API_KEY: key,
        DOCWRIGHT_PROJECT: projectId,
      },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    client = new Client({ name: 'docwright-test', version: '1.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await server?.stop();
    await Promise.all([t?.close(), model?.close()]);
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  test('offers exactly the six tools of docs/mcp.mdx with their parameters', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(Object.keys(byName).sort(), [
      'ask_docs',
      'create_docs_job',
      'get_docs_job',
      'list_docs_jobs',
      'send_docs_job_message',
      'wait_for_docs_job',
    ]);
    const params = (name: string) => ({
      properties: Object.keys(byName[name]!.inputSchema.properties ?? {}).sort(),
      required: [...(byName[name]!.inputSchema.required ?? [])].sort(),
    });
    assert.deepEqual(params('create_docs_job'), {
      properties: ['changes', 'prompt', 'ref'],
      required: ['prompt'],
    });
    assert.deepEqual(params('get_docs_job'), { properties: ['id'], required: ['id'] });
    assert.deepEqual(params('list_docs_jobs'), { properties: ['limit', 'status'], required: [] });
    assert.deepEqual(params('send_docs_job_message'), {
      properties: ['changes', 'id', 'prompt'],
      required: ['id', 'prompt'],
    });
    assert.deepEqual(params('wait_for_docs_job'), { properties: ['id', 'timeoutSeconds'], required: ['id'] });
    assert.deepEqual(params('ask_docs'), {
      properties: ['question', 'timeoutSeconds'],
      required: ['question'],
    });
  });

  test('ask_docs: an ask job, waited for; the answer with its sources as path:start-end, nothing pushed', async () => {
    const refs = git(repo, 'for-each-ref');
    model.push(
      toolCall('search', { pattern: 'Welcome' }),
      toolCall('answer', {
        text: 'The home page greets readers with "Welcome."',
        citations: [{ path: 'index.mdx', startLine: 5, endLine: 5 }],
      }),
    );
    const result = parts<AgentJob>(
      await client.callTool({ name: 'ask_docs', arguments: { question: 'What does the home page say?' } }),
    );
    assert.equal(result.isError, false);
    assert.equal(result.summary, 'The home page greets readers with "Welcome."\n\nSources:\n- index.mdx:5-5');
    assert.equal(result.value.mode, 'ask');
    assert.equal(result.value.status, 'completed');
    assert.equal(result.value.prLink, null);
    assert.deepEqual(result.value.citations, [{ path: 'index.mdx', startLine: 5, endLine: 5 }]);
    assert.equal(git(repo, 'for-each-ref'), refs, 'no branch was pushed');
    const empty = parts(await client.callTool({ name: 'ask_docs', arguments: { question: '  ' } }));
    assert.equal(empty.isError, true, 'an empty question is refused before anything is created');
  });

  test('create → wait (with progress) → follow-up → wait: the edits land on one branch', async () => {
    model.push(
      toolCall('write_file', {
        path: 'limits.mdx',
        content: '---\ntitle: Limits\n---\n\n100 jobs per hour.\n',
      }),
      toolCall('read_file', { path: 'docs.json' }),
      toolCall('edit_file', { path: 'docs.json', old_string: '"index"', new_string: '"index","limits"' }),
      toolCall('finish', { title: 'Document the limits', summary: 'Adds a Limits page.' }),
    );
    const created = parts<AgentJob>(
      await client.callTool({ name: 'create_docs_job', arguments: { prompt: 'Document the rate limit' } }),
    );
    assert.equal(created.isError, false, created.summary);
    assert.equal(created.value.status, 'active');
    assert.match(created.summary, new RegExp(`^job ${created.value.id} active — .*wait_for_docs_job`));

    const progress: string[] = [];
    const waited = parts<AgentJob>(
      await client.callTool(
        { name: 'wait_for_docs_job', arguments: { id: created.value.id, timeoutSeconds: 60 } },
        undefined,
        { onprogress: (p) => progress.push(String(p.message)), timeout: 90_000 },
      ),
    );
    assert.equal(waited.value.status, 'completed', waited.summary);
    assert.equal(waited.value.summary, 'Adds a Limits page.');
    const branch = waited.value.branch!;
    assert.equal(waited.summary, `job ${created.value.id} completed: branch ${branch}`);
    assert.ok(
      progress.some((m) => /agent\.tool_call: write_file limits\.mdx/.test(m)),
      progress.join('\n'),
    );

    model.push(
      toolCall('read_file', { path: 'limits.mdx' }),
      toolCall('edit_file', { path: 'limits.mdx', old_string: '100 jobs', new_string: '100 uses' }),
      toolCall('finish', { title: 'Say uses', summary: 'Counts uses, not jobs.' }),
    );
    const followed = parts<AgentJob>(
      await client.callTool({
        name: 'send_docs_job_message',
        arguments: { id: created.value.id, prompt: 'Say uses instead of jobs' },
      }),
    );
    assert.equal(followed.value.status, 'active', followed.summary);
    const again = parts<AgentJob>(
      await client.callTool({ name: 'wait_for_docs_job', arguments: { id: created.value.id } }, undefined, {
        timeout: 90_000,
      }),
    );
    assert.equal(again.value.status, 'completed', again.summary);
    assert.equal(again.value.branch, branch);
    assert.equal(git(repo, 'rev-list', '--count', `main..${branch}`), '2');
    assert.match(git(repo, 'show', `${branch}:limits.mdx`), /100 uses per hour/);

    const got = parts<AgentJob>(
      await client.callTool({ name: 'get_docs_job', arguments: { id: created.value.id } }),
    );
    assert.deepEqual(got.value, again.value);
    const listed = parts<{ jobs: AgentJob[] }>(
      await client.callTool({ name: 'list_docs_jobs', arguments: { limit: 5 } }),
    );
    assert.ok(listed.value.jobs.some((j) => j.id === created.value.id));
    assert.match(listed.summary, /^\d+ jobs?, newest first \(.*completed/);
  });

  test('API errors are tool errors with the problem’s message; a wait that times out returns the active job', async () => {
    const missing = parts(
      await client.callTool({ name: 'get_docs_job', arguments: { id: 'job_01hzzzzzzzzzzzzzzzzzzzzzzz' } }),
    );
    assert.equal(missing.isError, true);
    assert.equal(missing.summary, 'job job_01hzzzzzzzzzzzzzzzzzzzzzzz does not exist in this project');

    model.push(toolCall('finish', { title: 'Slow', summary: 'Slow.' }, { delayMs: 4_000 }));
    const slow = parts<AgentJob>(
      await client.callTool({ name: 'create_docs_job', arguments: { prompt: 'Take a while' } }),
    );
    const busy = parts(
      await client.callTool({
        name: 'send_docs_job_message',
        arguments: { id: slow.value.id, prompt: 'More' },
      }),
    );
    assert.equal(busy.isError, true);
    assert.match(busy.summary, /still running/);
    const started = Date.now();
    const early = parts<AgentJob>(
      await client.callTool({
        name: 'wait_for_docs_job',
        arguments: { id: slow.value.id, timeoutSeconds: 1 },
      }),
    );
    assert.ok(Date.now() - started < 3_000);
    assert.equal(early.isError, false);
    assert.equal(early.value.status, 'active');
    assert.match(early.summary, /still working after 1 s; call wait_for_docs_job again$/);
    const done = parts<AgentJob>(
      await client.callTool({ name: 'wait_for_docs_job', arguments: { id: slow.value.id } }),
    );
    assert.equal(done.value.status, 'completed');

    const invalid = (await client.callTool({
      name: 'create_docs_job',
      arguments: { prompt: '' },
    })) as CallToolResult;
    assert.equal(invalid.isError, true, 'arguments are validated');
    assert.ok(!stderr.includes(key), 'the API key never reaches the server’s output');
  });

  test('the tools check their own bounds (prompt length, timeoutSeconds) before calling the API', async () => {
    model.push(toolCall('finish', { title: 'Nothing', summary: 'Nothing to change.' }));
    const { value: job } = parts<AgentJob>(
      await client.callTool({ name: 'create_docs_job', arguments: { prompt: 'Check the intro' } }),
    );
    await client.callTool({ name: 'wait_for_docs_job', arguments: { id: job.id } }, undefined, {
      timeout: 90_000,
    });
    const db = t.app.store.db;
    const counts = async () => ({
      jobs: (await db.selectFrom('jobs').select('id').where('project_id', '=', projectId).execute()).length,
      runs: (await db.selectFrom('job_runs').select('id').where('job_id', '=', job.id).execute()).length,
    });
    const before = await counts();
    const refusals: [string, Record<string, unknown>, RegExp][] = [
      ['create_docs_job', { prompt: 'x'.repeat(MAX_PROMPT_CHARS + 1) }, /prompt/],
      ['create_docs_job', { prompt: ' \n\t ' }, /prompt/],
      ['send_docs_job_message', { id: job.id, prompt: 'x'.repeat(MAX_PROMPT_CHARS + 1) }, /prompt/],
      ['wait_for_docs_job', { id: job.id, timeoutSeconds: MAX_WAIT_SECONDS + 1 }, /timeoutSeconds/],
      ['wait_for_docs_job', { id: job.id, timeoutSeconds: 0 }, /timeoutSeconds/],
      ['wait_for_docs_job', { id: job.id, timeoutSeconds: 1.5 }, /timeoutSeconds/],
    ];
    for (const [name, args, field] of refusals) {
      const what = `${name} ${JSON.stringify(args).slice(0, 80)}`;
      const result = parts(await client.callTool({ name, arguments: args }));
      assert.equal(result.isError, true, what);
      assert.match(result.summary, /Input validation error: Invalid arguments for tool/, what);
      assert.match(result.summary, field, what);
    }
    assert.deepEqual(await counts(), before, 'no job and no follow-up was created');
    model.push(toolCall('finish', { title: 'Nothing', summary: 'Still nothing to change.' }));
    const longest = parts<AgentJob>(
      await client.callTool({
        name: 'send_docs_job_message',
        arguments: { id: job.id, prompt: 'x'.repeat(MAX_PROMPT_CHARS) },
      }),
    );
    assert.equal(longest.isError, false, longest.summary);
    await client.callTool({ name: 'wait_for_docs_job', arguments: { id: job.id } }, undefined, {
      timeout: 90_000,
    });
  });

  // The server URL has a default (the local server, docs/cli.mdx / issue 11); the key has none.
  test('without an API key the command says what to set and exits 2', async () => {
    const result = await runCli(['mcp'], { DOCWRIGHT_PROJECT: projectId });
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /DOCWRIGHT_API_KEY is not set/);
  });
});
