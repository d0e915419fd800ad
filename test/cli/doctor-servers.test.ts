// `docwright doctor` judges a job's model by the running server's recorded settings, as
// `project create` does (issue 35): it once warned "DOCWRIGHT_MODEL is not set" for every project
// while the server, started with a model, ran their jobs. Real doctor processes on the test
// database (both databases), the server as it records itself (process-registry.ts), a scripted model.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { reply, type ScriptedServer, startOpenAIServer } from '../doubles/openai-server.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/process.ts';

const MODEL = 'openai-compatible/scripted';
const KEY = 'sk-doctorServedKey0123456789abcdef';

interface Check {
  name: string;
  status: string;
  detail: string;
  project?: string;
}

describe('doctor judges the model by the running server', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let projectId: string;

  /** A live `docwright serve` as it records itself, with these model settings. */
  const recordServer = async (settings: { defaultModel: string | null; key: boolean }) => {
    const seen = new Date().toISOString();
    await t.app.store.db.deleteFrom('server_processes').execute();
    await t.app.store.db
      .insertInto('server_processes')
      .values({
        id: 'srv_doctor',
        host: 'here',
        pid: 4242,
        serves_api: 1,
        runs_jobs: 1,
        version: '0.1.0',
        settings: JSON.stringify({
          defaultModel: settings.defaultModel,
          modelKeys: { anthropic: false, openai: false, openaiCompatible: settings.key },
          // As the server records it: without credentials, query or fragment (process-registry.ts).
          openaiCompatibleBaseUrl: `${model.url}/`,
          webhookAllowPrivate: false,
        }),
        started_at: seen,
        seen_at: seen,
      })
      .execute();
  };
  const doctor = async (env: Record<string, string> = {}) => {
    const run = await runCli(['doctor', '--json', '--project', projectId], { ...t.database.env, ...env });
    assert.notEqual(run.stdout, '', run.stderr);
    assert.ok(!(run.stdout + run.stderr).includes(KEY), 'no key in the output');
    const checks = (JSON.parse(run.stdout) as { checks: Check[] }).checks;
    const modelCheck = (project?: string) => checks.find((c) => c.name === 'model' && c.project === project)!;
    return { global: modelCheck(), project: modelCheck(projectId) };
  };

  before(async () => {
    [t, model] = await Promise.all([startTestApp(), startOpenAIServer({ apiKey: KEY })]);
    projectId = (await seedProject(t.app)).projectId;
  });
  after(async () => {
    await Promise.all([t?.close(), model?.close()]);
  });

  test('a server with a model: no "DOCWRIGHT_MODEL is not set" from a shell without one, and nothing sent from it', async () => {
    await recordServer({ defaultModel: MODEL, key: true });
    const sent = model.requests.length;
    const { global, project } = await doctor();
    for (const check of [global, project]) {
      assert.equal(check.status, 'ok', check.detail);
      assert.match(
        check.detail,
        /^openai-compatible\/scripted is configured \(judged by the running docwright serve \(pid 4242 on here\), whose keys and endpoint differ from this shell's: not contacted from here\)$/,
      );
    }
    assert.equal(model.requests.length, sent, 'no request with keys this shell does not hold');
  });

  test("a shell with the server's settings contacts the model, and says whose settings decided", async () => {
    await recordServer({ defaultModel: MODEL, key: true });
    model.push(reply('OK'));
    const { project } = await doctor({
      DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url,
      DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY: KEY,
    });
    assert.equal(project.status, 'ok', project.detail);
    assert.match(
      project.detail,
      /^openai-compatible\/scripted answered in \d+ ms \(judged by the running docwright serve/,
    );
  });

  test('a server without a model is named, though this shell has one; a key it lacks fails', async () => {
    await recordServer({ defaultModel: null, key: true });
    const { project } = await doctor({ DOCWRIGHT_MODEL: MODEL });
    assert.equal(project.status, 'warn');
    assert.match(
      project.detail,
      /^DOCWRIGHT_MODEL is not set in the environment of the running docwright serve \(pid 4242 on here\): .*model-not-configured/,
    );

    await recordServer({ defaultModel: 'anthropic/claude-sonnet-4-5', key: true });
    const failed = await doctor({ ANTHROPIC_API_KEY: 'sk-ant-shell-0123456789' });
    assert.equal(failed.project.status, 'fail');
    assert.match(
      failed.project.detail,
      /^model-not-configured: .*ANTHROPIC_API_KEY.*, in the environment of the running docwright serve \(pid 4242 on here\)$/,
    );
    await t.app.store.db.deleteFrom('server_processes').execute();
  });
});
