// `docwright automation …` as a user runs it (real CLI processes on the test database, both
// databases): create each trigger type from flags, list, show, run, runs, disable, enable, delete;
// `--json` prints one JSON document; a bad cron names the field.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/process.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

describe('docwright automation', () => {
  let t: TestApp;
  let p: SeededProject;
  const cli = (...args: string[]) => runCli(args, t.database.env);
  const cliJson = async <T>(...args: string[]): Promise<T> => {
    const run = await cli(...args, '--json');
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as T;
  };

  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
  });
  after(() => t?.close());

  test('create, list, show, run, runs, disable, enable, delete', async () => {
    const file = path.join(temporaryDirectory('docwright-instruction-'), 'instruction.md');
    writeFileSync(file, 'Draft a changelog entry for the week.\n');
    // biome-ignore lint/suspicious/noExplicitAny: JSON from the CLI
    const weekly = await cliJson<any>(
      'automation',
      'create',
      '--project',
      p.projectId,
      '--name',
      'Changelog',
      '--trigger',
      'schedule',
      '--cron',
      '0 9 * * 1',
      '--time-zone',
      'Europe/Berlin',
      '--batch',
      '--instruction-file',
      file,
      '--draft',
    );
    assert.match(weekly.id, /^aut_/);
    assert.deepEqual(weekly.trigger, {
      type: 'schedule',
      cron: '0 9 * * 1',
      timeZone: 'Europe/Berlin',
      batch: true,
    });
    assert.equal(weekly.instruction, 'Draft a changelog entry for the week.');
    assert.equal(weekly.draft, true);
    // biome-ignore lint/suspicious/noExplicitAny: JSON from the CLI
    const code = await cliJson<any>(
      'automation',
      'create',
      '--project',
      p.projectId,
      '--name',
      'Docs',
      '--trigger',
      'code-change',
      '--repository',
      'docs',
      '--paths',
      'src/**',
      '--paths',
      'api/**',
      '--instruction',
      'Update the docs.',
    );
    assert.deepEqual(code.trigger, {
      type: 'code-change',
      repositories: ['docs'],
      paths: ['src/**', 'api/**'],
      skipLabels: ['no-docs'],
    });

    const listed = await cliJson<{ automations: { id: string }[] }>(
      'automation',
      'list',
      '--project',
      p.projectId,
    );
    assert.deepEqual(
      listed.automations.map((a) => a.id),
      [code.id, weekly.id],
    );
    const table = await cli('automation', 'list', '--project', p.projectId);
    assert.match(table.stdout, /schedule "0 9 \* \* 1" Europe\/Berlin batch/);
    const shown = await cliJson<{ id: string }>('automation', 'show', '--project', p.projectId, code.id);
    assert.equal(shown.id, code.id);

    const run = await cliJson<{ runId: string; jobId: string }>(
      'automation',
      'run',
      '--project',
      p.projectId,
      code.id,
    );
    assert.match(run.jobId, /^job_/);
    const runs = await cliJson<{ runs: { id: string; outcome: string; jobId: string }[] }>(
      'automation',
      'runs',
      '--project',
      p.projectId,
      code.id,
    );
    assert.deepEqual(
      runs.runs.map((r) => [r.id, r.outcome, r.jobId]),
      [[run.runId, 'running', run.jobId]],
    );

    const disabled = await cli('automation', 'disable', '--project', p.projectId, code.id);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.equal(disabled.stdout, `disabled automation ${code.id} "Docs"\n`);
    assert.equal((await t.app.automations.get(p.projectId, code.id)).enabled, false);
    const enabled = await cliJson<{ enabled: boolean }>(
      'automation',
      'enable',
      '--project',
      p.projectId,
      code.id,
    );
    assert.equal(enabled.enabled, true);

    const deleted = await cli('automation', 'delete', '--project', p.projectId, weekly.id);
    assert.equal(deleted.code, 0, deleted.stderr);
    const missing = await cli('automation', 'show', '--project', p.projectId, weekly.id);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /does not exist/);
  });

  test('a bad cron expression names the field; --instruction and --instruction-file are exclusive', async () => {
    const bad = await cli(
      'automation',
      'create',
      '--project',
      p.projectId,
      '--name',
      'x',
      '--trigger',
      'schedule',
      '--cron',
      '0 9 * *',
      '--instruction',
      'x',
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /trigger\.cron/);
    const neither = await cli(
      'automation',
      'create',
      '--project',
      p.projectId,
      '--name',
      'x',
      '--trigger',
      'manual',
    );
    assert.equal(neither.code, 2);
  });

  test('run gives the job the running server’s default model, not this shell’s (issue 35)', async () => {
    // The first hour: the server ran with DOCWRIGHT_MODEL, the shell had none, and the job that
    // `automation run` created had model "" and failed model-not-configured while Run now worked.
    const manual = await t.app.automations.create(p.projectId, {
      name: 'By hand',
      trigger: { type: 'manual' },
      instruction: 'Check the home page.',
    });
    const seen = new Date().toISOString();
    await t.app.store.db
      .insertInto('server_processes')
      .values({
        id: 'srv_running',
        host: 'here',
        pid: 1,
        serves_api: 1,
        runs_jobs: 1,
        version: '0.1.0',
        settings: JSON.stringify({
          defaultModel: 'openai-compatible/server-model',
          modelKeys: { anthropic: false, openai: false, openaiCompatible: false },
          openaiCompatibleBaseUrl: null,
          webhookAllowPrivate: false,
        }),
        started_at: seen,
        seen_at: seen,
      })
      .execute();
    const runWith = async (env: Record<string, string>) => {
      const run = await runCli(['automation', 'run', '--project', p.projectId, manual.id, '--json'], {
        ...t.database.env,
        ...env,
      });
      assert.equal(run.code, 0, run.stderr);
      const { jobId } = JSON.parse(run.stdout) as { jobId: string };
      return (await t.app.jobs.get(p.projectId, jobId)).model;
    };
    try {
      assert.equal(await runWith({}), 'openai-compatible/server-model');
      assert.equal(
        await runWith({ DOCWRIGHT_MODEL: 'anthropic/shell-model' }),
        'openai-compatible/server-model',
      );
    } finally {
      await t.app.store.db.deleteFrom('server_processes').where('id', '=', 'srv_running').execute();
    }
    // No server running: this shell's setting is all there is.
    assert.equal(await runWith({ DOCWRIGHT_MODEL: 'anthropic/shell-model' }), 'anthropic/shell-model');
  });

  test('run counts against the running server’s rate limit, not this shell’s default', async () => {
    const { projectId } = await seedProject(t.app);
    const manual = await t.app.automations.create(projectId, {
      name: 'By hand',
      trigger: { type: 'manual' },
      instruction: 'Check the home page.',
    });
    const seen = new Date().toISOString();
    await t.app.store.db
      .insertInto('server_processes')
      .values({
        id: 'srv_limited',
        host: 'here',
        pid: 1,
        serves_api: 1,
        runs_jobs: 1,
        version: '0.1.0',
        settings: JSON.stringify({
          defaultModel: 'openai-compatible/server-model',
          modelKeys: { anthropic: false, openai: false, openaiCompatible: false },
          openaiCompatibleBaseUrl: null,
          webhookAllowPrivate: false,
          defaultRateLimit: 1,
        }),
        started_at: seen,
        seen_at: seen,
      })
      .execute();
    try {
      const run = () =>
        runCli(['automation', 'run', '--project', projectId, manual.id, '--json'], {
          ...t.database.env,
          DOCWRIGHT_RATE_LIMIT: '1000',
        });
      assert.equal((await run()).code, 0);
      const second = await run();
      assert.notEqual(second.code, 0, 'the server allows one job an hour');
      assert.match(second.stderr, /rate/i);
    } finally {
      await t.app.store.db.deleteFrom('server_processes').where('id', '=', 'srv_limited').execute();
    }
  });
});
