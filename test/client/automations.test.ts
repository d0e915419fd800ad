// The typed client's automations calls against a real server on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '../../src/client/client.ts';
import { DocwrightApiError } from '../../src/client/errors.ts';
import { seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

describe('client: automations', () => {
  let t: TestApp;
  let client: ReturnType<typeof createClient>;
  let projectId: string;
  before(async () => {
    t = await startTestApp();
    const seeded = await seedProject(t.app);
    projectId = seeded.projectId;
    client = createClient({ baseUrl: await t.listen(), apiKey: seeded.key, retries: 0 });
  });
  after(() => t.close());

  test('create, list, get, update, trigger, runs, delete', async () => {
    const created = await client.createAutomation(projectId, {
      name: 'Links',
      trigger: { type: 'schedule', cron: '0 6 * * 1' },
      instruction: 'Fix broken links.',
    });
    assert.equal(created.trigger.type, 'schedule');
    assert.deepEqual(
      (await client.listAutomations(projectId)).map((a) => a.id),
      [created.id],
    );
    assert.equal((await client.getAutomation(projectId, created.id)).name, 'Links');
    const updated = await client.updateAutomation(projectId, created.id, { enabled: false });
    assert.equal(updated.enabled, false);
    const started = await client.triggerAutomation(projectId, created.id, {
      changes: [{ repository: 'docs', range: 'v1..main' }],
    });
    assert.equal(started.automationId, created.id);
    const page = await client.listAutomationRuns(projectId, created.id, { limit: 10 });
    assert.deepEqual(
      page.runs.map((r) => [r.id, r.jobId, r.trigger.changes]),
      [[started.runId, started.jobId, [{ repository: 'docs', range: 'v1..main' }]]],
    );
    assert.equal(page.nextCursor, null);
    await client.deleteAutomation(projectId, created.id);
    await assert.rejects(client.getAutomation(projectId, created.id), (error: unknown) => {
      assert.ok(error instanceof DocwrightApiError);
      assert.equal(error.status, 404);
      assert.equal(error.code, 'automation-not-found');
      return true;
    });
  });
});
