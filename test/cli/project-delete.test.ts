// `docwright project delete` as a user runs it, beside a running `docwright serve` on the same
// database: it says what it would delete and asks first (the project's name on a terminal,
// --yes elsewhere); once deleted, the running server refuses the project's key.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import {
  cleanEnv,
  runCli,
  type ServerProcess,
  scriptMissing,
  startServerProcess,
} from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');

describe('docwright project delete', () => {
  let t: TestApp;
  let server: ServerProcess;
  const cli = (args: string[], input = '') => runCli(args, t.database.env, input);
  const exists = async (id: string) => (await t.app.projects.list()).some((p) => p.id === id);
  /** `docwright <args>` on a pseudo-terminal (util-linux `script`), typing `input`: its code and what the terminal showed. */
  const onTerminal = (args: string[], input: string) =>
    new Promise<{ code: number; stdout: string }>((resolve) => {
      const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
      const command = [process.execPath, BIN, ...args].map(quote).join(' ');
      const child = execFile(
        'script',
        ['-qec', command, '/dev/null'],
        { env: { ...cleanEnv(), ...t.database.env }, timeout: 60_000 },
        (error, stdout) => resolve({ code: error ? Number(error.code ?? -1) : 0, stdout }),
      );
      child.stdin!.end(input);
    });

  before(async () => {
    t = await startTestApp();
    // An API process only: the test's job stays active (queued), as a long one would be.
    server = await startServerProcess(t.database.env, ['--no-worker']);
  });
  after(async () => {
    await server?.stop();
    await t?.close();
  });

  test('without a terminal it says what would go and deletes nothing unless --yes; then the server refuses the key', async () => {
    const p: SeededProject = await seedProject(t.app);
    const job = (await t.app.jobs.create(p.projectId, { prompt: 'Fix the typo' })).job;
    const poll = () =>
      fetch(`${server.url}/v2/agent/${p.projectId}/job/${job.id}`, { headers: bearer(p.key) });
    const list = () => fetch(`${server.url}/v2/agent/${p.projectId}/jobs`, { headers: bearer(p.key) });
    assert.equal((await poll()).status, 200);
    assert.equal((await list()).status, 200, 'the server has verified (and may remember) the key');

    const refused = await cli(['project', 'delete', p.projectId]);
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, '');
    assert.equal(
      refused.stderr.trim(),
      `docwright: this deletes project ${p.projectId} (Docs) and 1 job (1 active, cancelled), 1 API key, 0 webhook endpoints; nothing was deleted: pass --yes to confirm`,
    );
    assert.equal(await exists(p.projectId), true);

    const deleted = await cli(['project', 'delete', p.projectId, '--yes', '--json']);
    assert.equal(deleted.code, 0, deleted.stderr);
    const shown = JSON.parse(deleted.stdout);
    assert.equal(shown.id, p.projectId);
    assert.deepEqual(shown.deleted, { jobs: 1, activeJobs: 1, keys: 1, webhookEndpoints: 0, mirrors: 0 });
    assert.equal(await exists(p.projectId), false);

    // The poll reads the key with the job: refused at once.
    assert.equal((await poll()).status, 401);
    // Routes that remember verified keys forget them when another process deletes (SQLite: its
    // change counter, at once; PostgreSQL: a keys-changed notification from the deleting command).
    await waitFor(async () => (await list()).status === 401, { timeoutMs: 10_000 });

    const again = await cli(['project', 'delete', p.projectId, '--yes']);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /project prj_\w+ does not exist/);
  });

  test('on a terminal it asks for the project name: a wrong one deletes nothing, the right one deletes', {
    skip: scriptMissing,
  }, async () => {
    const p = await seedProject(t.app);
    const wrong = await onTerminal(['project', 'delete', p.projectId], 'docs\n');
    assert.equal(wrong.code, 2, wrong.stdout);
    assert.match(wrong.stdout, /Type the project's name \(Docs\) to delete it: /);
    assert.match(wrong.stdout, /the name did not match; nothing was deleted/);
    assert.equal(await exists(p.projectId), true);

    const right = await onTerminal(['project', 'delete', p.projectId], 'Docs\n');
    assert.equal(right.code, 0, right.stdout);
    assert.match(right.stdout, new RegExp(`deleted project ${p.projectId} \\(Docs\\): 0 jobs, 1 API key`));
    assert.equal(await exists(p.projectId), false);
  });
});
