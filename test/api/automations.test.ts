// The automations API (docs/automations.mdx) over HTTP on both databases: same keys and errors as the job
// API; lists newest first; trigger → 202 with the run and its job (and the rate-limit headers);
// Mintlify's workflow trigger; everything described in /openapi.json.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

describe('automations API', () => {
  let t: TestApp;
  let projectId: string;
  let key: string;
  let otherKey: string;
  before(async () => {
    t = await startTestApp();
    ({ projectId, key } = await seedProject(t.app));
    otherKey = (await seedProject(t.app)).key;
  });
  after(() => t.close());

  const call = (method: string, route: string, body?: unknown, k = key) =>
    t.server.inject({
      method: method as 'GET',
      url: `/v2/agent/${projectId}${route}`,
      headers: { ...bearer(k), ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });

  test('create, list, get, update, run, list runs, delete', async () => {
    const created = await call('POST', '/automations', {
      name: 'Update docs',
      trigger: { type: 'code-change', repositories: ['docs'], paths: ['src/**'] },
      instruction: 'Update the docs for the change.',
    });
    assert.equal(created.statusCode, 201, created.body);
    const automation = created.json();
    assert.match(automation.id, /^aut_[0-9a-z]{26}$/);
    assert.deepEqual(automation.trigger, {
      type: 'code-change',
      repositories: ['docs'],
      paths: ['src/**'],
      skipLabels: ['no-docs'],
    });
    assert.equal(automation.enabled, true);
    assert.equal(automation.draft, false);
    assert.equal(created.headers.location, `/v2/agent/${projectId}/automations/${automation.id}`);

    const second = (
      await call('POST', '/automations', { name: 'Manual', trigger: { type: 'manual' }, instruction: 'Go.' })
    ).json();
    const list = await call('GET', '/automations');
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json().automations.map((a: { id: string }) => a.id),
      [second.id, automation.id],
    );
    assert.deepEqual((await call('GET', `/automations/${automation.id}`)).json(), automation);

    const patched = await call('PATCH', `/automations/${automation.id}`, { enabled: false, draft: true });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().enabled, false);
    assert.equal(patched.json().draft, true);

    const triggered = await call('POST', `/automations/${second.id}/trigger`, {
      changes: [{ repository: 'docs', commit: '0123456789abcdef0123456789abcdef01234567' }],
    });
    assert.equal(triggered.statusCode, 202, triggered.body);
    const { automationId, runId, jobId } = triggered.json();
    assert.equal(automationId, second.id);
    assert.match(runId, /^arun_/);
    assert.match(jobId, /^job_/);
    assert.match(String(triggered.headers.ratelimit), /^"create";r=\d+;t=\d+$/);
    const again = await call('POST', `/automations/${second.id}/trigger`);
    assert.equal(again.statusCode, 202, again.body);

    const runs = await call('GET', `/automations/${second.id}/runs?limit=1`);
    assert.equal(runs.statusCode, 200);
    const page = runs.json();
    assert.equal(page.runs.length, 1);
    assert.equal(page.runs[0].id, again.json().runId, 'newest first');
    assert.equal(page.runs[0].outcome, 'running');
    assert.deepEqual(page.runs[0].trigger, { type: 'manual', changes: [], scheduledFor: null });
    const next = (
      await call('GET', `/automations/${second.id}/runs?limit=1&cursor=${page.nextCursor}`)
    ).json();
    assert.equal(next.runs[0].id, runId);
    assert.deepEqual(next.runs[0].trigger.changes, [
      { repository: 'docs', commit: '0123456789abcdef0123456789abcdef01234567' },
    ]);
    assert.equal(next.nextCursor, null);

    const v1 = await t.server.inject({
      method: 'POST',
      url: `/v1/workflow/${projectId}/${second.id}/trigger`,
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(v1.statusCode, 202, v1.body);
    assert.equal(v1.json().schemaId, second.id);
    assert.match(v1.json().instanceId, /^arun_/);
    assert.match(v1.json().jobId, /^job_/);

    const deleted = await call('DELETE', `/automations/${automation.id}`);
    assert.equal(deleted.statusCode, 200);
    const gone = await call('GET', `/automations/${automation.id}`);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'automation-not-found');
  });

  test('errors as the job API: 401, 403, 404, 400 naming the field', async () => {
    assert.equal((await call('GET', '/automations', undefined, 'dwk_nope')).statusCode, 401);
    assert.equal((await call('GET', '/automations', undefined, otherKey)).statusCode, 403);
    const unknown = await call('POST', '/automations/aut_00000000000000000000000000/trigger');
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'automation-not-found');
    const bad = await call('POST', '/automations', {
      name: 'Bad',
      trigger: { type: 'schedule', cron: '61 * * * *' },
      instruction: 'x',
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(
      bad.json().errors.map((e: { field: string }) => e.field),
      ['trigger.cron'],
    );
    const unknownRepo = await call('POST', '/automations', {
      name: 'Bad',
      trigger: { type: 'code-change', repositories: ['api'] },
      instruction: 'x',
    });
    assert.equal(unknownRepo.statusCode, 400, unknownRepo.body);
    const second = (
      await call('POST', '/automations', { name: 'Manual', trigger: { type: 'manual' }, instruction: 'Go.' })
    ).json();
    const badChanges = await call('POST', `/automations/${second.id}/trigger`, {
      changes: [{ repository: 'docs', range: 'not a range' }],
    });
    assert.equal(badChanges.statusCode, 400);
    assert.equal(badChanges.json().errors[0].field, 'changes.0.range');
    assert.deepEqual(
      (await call('GET', `/automations/${second.id}/runs`)).json().runs,
      [],
      'no run recorded',
    );
    const badRuns = await call('GET', '/automations/aut_00000000000000000000000000/runs?limit=0');
    assert.equal(badRuns.statusCode, 404, 'the automation is looked up first');
    assert.equal(unknownRepo.json().errors[0].field, 'trigger.repositories.0');
  });

  test('another project’s automation by id, under this key’s project: 404 to get, update, delete, trigger and runs; it is left unchanged', async () => {
    const other = await seedProject(t.app);
    const theirs = await t.app.automations.create(other.projectId, {
      name: 'Theirs',
      trigger: { type: 'manual' },
      instruction: 'Update their docs.',
    });
    const attempts: [string, string, unknown?][] = [
      ['GET', `/automations/${theirs.id}`],
      ['PATCH', `/automations/${theirs.id}`, { enabled: false, name: 'Mine now' }],
      ['POST', `/automations/${theirs.id}/trigger`, {}],
      ['GET', `/automations/${theirs.id}/runs`],
      ['DELETE', `/automations/${theirs.id}`],
    ];
    for (const [method, route, body] of attempts) {
      const res = await call(method, route, body);
      assert.equal(res.statusCode, 404, `${method} ${route}: ${res.body}`);
      assert.equal(res.json().code, 'automation-not-found');
    }
    const v1 = await t.server.inject({
      method: 'POST',
      url: `/v1/workflow/${projectId}/${theirs.id}/trigger`,
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(v1.statusCode, 404, v1.body);
    // Their automation as it was: not renamed, not disabled, not deleted, never run.
    assert.deepEqual(await t.app.automations.get(other.projectId, theirs.id), theirs);
    assert.deepEqual((await t.app.automations.runs(other.projectId, theirs.id)).runs, []);
    // Their own key reaches it: the routes work, the 404s above were the project's scope.
    const own = await t.server.inject({
      method: 'GET',
      url: `/v2/agent/${other.projectId}/automations/${theirs.id}`,
      headers: bearer(other.key),
    });
    assert.equal(own.statusCode, 200, own.body);
  });

  test('/openapi.json describes every automations operation', async () => {
    const doc = (await t.server.inject('/openapi.json')).json();
    for (const [path, methods] of Object.entries({
      '/v2/agent/{projectId}/automations': ['get', 'post'],
      '/v2/agent/{projectId}/automations/{id}': ['get', 'patch', 'delete'],
      '/v2/agent/{projectId}/automations/{id}/runs': ['get'],
      '/v2/agent/{projectId}/automations/{id}/trigger': ['post'],
      '/v1/workflow/{projectId}/{automationId}/trigger': ['post'],
    })) {
      assert.deepEqual(Object.keys(doc.paths[path] ?? {}).sort(), [...methods].sort(), path);
    }
    assert.ok(doc.components.schemas.AutomationRun);
  });
});
