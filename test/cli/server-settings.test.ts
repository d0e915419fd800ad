// Commands that depend on the server's environment judge by the running server, not by their own
// shell (issue 23): the README's flow once exported DOCWRIGHT_MODEL in the user's shell after
// `scripts/start.sh` had started the server without it, and `project create` warned nothing while
// every job failed model-not-configured. Real `docwright serve` processes and real commands.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { bearer, createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { cleanEnv, runCli, type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

describe('commands judge by the running server’s settings', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let repo: string;
  const running: ServerProcess[] = [];

  /** `docwright serve` on the test database with exactly `env` as its model and webhook settings. */
  const serve = async (env: Record<string, string> = {}) => {
    const server = await startServerProcess(
      { ...(cleanEnv() as Record<string, string>), DOCWRIGHT_LOG_LEVEL: 'info', ...t.database.env, ...env },
      [],
      { replaceEnv: true },
    );
    running.push(server);
    return server;
  };
  const stop = async (server: ServerProcess) => {
    await server.stop();
    running.splice(running.indexOf(server), 1);
  };
  /** A command with the test database and `env` as this shell's environment. */
  const cli = (env: Record<string, string>, ...args: string[]) => runCli(args, { ...t.database.env, ...env });
  const createProject = async (env: Record<string, string> = {}, ...flags: string[]) => {
    const run = await cli(
      env,
      'project',
      'create',
      '--name',
      'Docs',
      '--repository',
      repo,
      ...flags,
      '--json',
    );
    assert.equal(run.code, 0, run.stderr);
    return { id: (JSON.parse(run.stdout) as { id: string }).id, stderr: run.stderr };
  };

  /** A job created over the server's API, once it has ended. */
  const runJob = async (server: ServerProcess, projectId: string, prompt: string) => {
    const key = (await t.app.keys.create(projectId)).key;
    const job = (await (
      await fetch(`${server.url}/v2/agent/${projectId}/job`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ prompt }),
      })
    ).json()) as { id: string };
    return waitFor(async () => {
      const found = await t.app.jobs.get(projectId, job.id);
      return found.status === 'active' ? undefined : found;
    });
  };

  before(async () => {
    [t, model] = await Promise.all([startTestApp(), startOpenAIServer()]);
    repo = createGitRepository({ 'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n' });
  });
  after(async () => {
    for (const server of [...running]) await server.stop();
    await Promise.all([t?.close(), model?.close()]);
  });

  test("the README's order: a model exported in the shell after the server started is reported, not trusted", async () => {
    const server = await serve();
    const created = await createProject({
      DOCWRIGHT_MODEL: 'anthropic/claude-sonnet-4-5',
      ANTHROPIC_API_KEY: 'sk-ant-shell-0123456789',
    });
    const warning = created.stderr.trim();
    assert.match(
      warning,
      /^docwright: warning: the running docwright serve \(pid \d+ on .+\) has no model: DOCWRIGHT_MODEL is not set in its environment, so jobs of this project will fail with model-not-configured\. This shell's DOCWRIGHT_MODEL=anthropic\/claude-sonnet-4-5 does not reach a server that is already running: restart it with that variable set\./,
    );
    assert.ok(!warning.includes('sk-ant-shell'), 'no key in the output');
    // What the warning foretold is what happens.
    const failed = await runJob(server, created.id, 'Say hello');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'model-not-configured');
    await stop(server);
  });

  test('a server with a model and its endpoint: no warning from a shell that has neither, and the job runs', async () => {
    const server = await serve({
      DOCWRIGHT_MODEL: 'openai-compatible/scripted',
      DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url,
    });
    const created = await createProject();
    assert.equal(created.stderr, '', 'judged by the server, which can run it');
    model.push(toolCall('finish', { title: 'Nothing to change', summary: 'The page is fine.' }));
    const done = await runJob(server, created.id, 'Check the home page');
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    await stop(server);
  });

  test("a key the server lacks is reported with the server's name, though the shell has it; nothing secret is recorded", async () => {
    const server = await serve({
      DOCWRIGHT_MODEL: 'anthropic/claude-sonnet-4-5',
      OPENAI_API_KEY: 'sk-openai-server-0123456789',
      DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: 'http://user:hunter2@127.0.0.1:9/v1?token=abc',
    });
    const created = await createProject({ ANTHROPIC_API_KEY: 'sk-ant-shell-0123456789' });
    assert.match(
      created.stderr.trim(),
      /^docwright: warning: model "anthropic\/claude-sonnet-4-5" needs an API key: set ANTHROPIC_API_KEY or the project's anthropic key \(jobs will fail with model-not-configured\), in the environment of the running docwright serve \(pid \d+ on .+\)$/,
    );
    const [row] = await t.app.store.db.selectFrom('server_processes').selectAll().execute();
    assert.ok(row, 'the server recorded itself');
    const recorded = JSON.stringify(row);
    for (const secret of ['sk-openai-server', 'hunter2', 'token=abc', 'user:'])
      assert.ok(!recorded.includes(secret), `${secret} is not recorded`);
    assert.deepEqual(JSON.parse(row.settings), {
      defaultModel: 'anthropic/claude-sonnet-4-5',
      modelKeys: { anthropic: false, openai: true, openaiCompatible: false },
      openaiCompatibleBaseUrl: 'http://127.0.0.1:9/v1',
      webhookAllowPrivate: false,
      defaultRateLimit: 100,
    });
    await stop(server);
    const rows = await t.app.store.db.selectFrom('server_processes').select('id').execute();
    assert.deepEqual(rows, [], 'a server that stops removes its record');
  });

  test("with no server running, the check says it used this shell's environment; a server long gone does not count", async () => {
    // What a killed server leaves: a record nobody refreshes.
    const long = new Date(Date.now() - 120_000).toISOString();
    await t.app.store.db
      .insertInto('server_processes')
      .values({
        id: 'srv_gone',
        host: 'elsewhere',
        pid: 1,
        serves_api: 1,
        runs_jobs: 1,
        version: '0.1.0',
        settings: JSON.stringify({
          defaultModel: null,
          modelKeys: { anthropic: false, openai: false, openaiCompatible: false },
          openaiCompatibleBaseUrl: null,
          webhookAllowPrivate: false,
        }),
        started_at: long,
        seen_at: long,
      })
      .execute();
    const created = await createProject({
      DOCWRIGHT_MODEL: 'anthropic/claude-sonnet-4-5',
      ANTHROPIC_API_KEY: 'sk-ant-shell-0123456789',
    });
    assert.match(
      created.stderr,
      /^docwright: note: no docwright server is running on .+, so the model was checked in this shell's environment \(DOCWRIGHT_MODEL is anthropic\/claude-sonnet-4-5\): start the server with the same model settings\n$/,
    );
    await t.app.store.db.deleteFrom('server_processes').execute();
  });

  test('webhook create judges private addresses by the server that sends, or says it used the shell', async () => {
    const { id } = await createProject({}, '--model', 'openai-compatible/scripted');
    const create = (env: Record<string, string>) =>
      cli(env, 'webhook', 'create', '--project', id, '--url', 'http://127.0.0.1:9/hook', '--json');
    const allow = { DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE: '1' };

    // No server: this shell's setting decides, and the command says so either way.
    const refusedHere = await create({});
    assert.equal(refusedHere.code, 2);
    assert.match(
      refusedHere.stderr,
      /127\.0\.0\.1 is a loopback.*; no docwright server is running on .+, so this was judged by this shell's environment$/m,
    );
    const acceptedHere = await create(allow);
    assert.equal(acceptedHere.code, 0, acceptedHere.stderr);
    assert.match(
      acceptedHere.stderr,
      /^docwright: note: no docwright server is running on .+ \(DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1\): start the server with it too, or it will refuse to send to http:\/\/127\.0\.0\.1:9\/hook$/m,
    );

    // A server that allows them: accepted from a shell that does not.
    let server = await serve(allow);
    const accepted = await create({});
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.equal(accepted.stderr, '');
    await stop(server);

    // A server that refuses them: refused from a shell that allows them, naming the server.
    server = await serve();
    const refused = await create(allow);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /127\.0\.0\.1 is a loopback.*; judged by the running docwright serve \(pid \d+ on .+\), which sends webhooks and was started without DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1$/m,
    );
    await stop(server);
  });
});
