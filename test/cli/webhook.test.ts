// `docwright webhook …` as a user runs it (real CLI processes on the test database): disabling and
// enabling an endpoint.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/process.ts';

interface Endpoint {
  id: string;
  url: string;
  enabled: boolean;
  disabledReason: string | null;
}

describe('docwright webhook disable and enable', () => {
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

  test('disable stops sending (queued deliveries fail, saying why); enable sends again', async () => {
    const endpoint = await cliJson<Endpoint>(
      'webhook',
      'create',
      '--project',
      p.projectId,
      '--url',
      'https://hooks.example.com/docwright',
    );
    assert.equal(endpoint.enabled, true);
    // A job.archived delivery waits to be sent (no worker runs here).
    const job = await t.app.jobs.create(p.projectId, { prompt: 'Fix the typo' });
    await t.app.jobs.archive(p.projectId, job.job.id);
    const [queued] = (await t.app.webhooks.listDeliveries(p.projectId)).deliveries;
    assert.equal(queued?.status, 'pending');

    const disabled = await cli('webhook', 'disable', endpoint.id);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.equal(
      disabled.stdout,
      `disabled webhook endpoint ${endpoint.id} (https://hooks.example.com/docwright)\n`,
    );
    const [listed] = (await cliJson<{ endpoints: Endpoint[] }>('webhook', 'list', '--project', p.projectId))
      .endpoints;
    assert.equal(listed?.enabled, false);
    assert.equal(listed?.disabledReason, 'disabled by an operator');
    const table = await cli('webhook', 'list', '--project', p.projectId);
    assert.match(table.stdout, /disabled: disabled by an operator/);
    const failed = await t.app.webhooks.getDelivery(queued.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.lastError ?? '', /not sent: the endpoint was disabled/);

    const enabled = await cliJson<Endpoint>('webhook', 'enable', endpoint.id);
    assert.equal(enabled.enabled, true);
    assert.equal(enabled.disabledReason, null);

    const unknown = await cli('webhook', 'disable', 'whe_00000000000000000000000000');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /webhook endpoint whe_0+ does not exist/);
  });
});
