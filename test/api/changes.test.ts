// The `changes` of create and message bodies (docs/code-context.mdx): validated with
// 400 naming the entry, taken from the prompt's change URLs of configured repositories only,
// stored with the run for the worker, kept by follow-ups and retries; the AgentJob lists them
// from creation (`sha` and `title` null, the URL when the host tells it) until a run resolves them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseChangeRequests } from '../../src/jobs/changes.ts';
import { bearer, startTestApp, type TestApp } from '../helpers/app.ts';

describe('job changes', () => {
  let t: TestApp;
  let projectId: string;
  let key: string;
  const DOCS = 'https://github.com/acme/docs';
  before(async () => {
    t = await startTestApp();
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: DOCS,
      token: 'ghp_changesTest0123456789',
      ref: 'main',
      model: 'openai/gpt-test',
    });
    projectId = project.id;
    key = (await t.app.keys.create(projectId)).key;
  });
  after(() => t.close());

  const post = (route: string, body: unknown) =>
    t.server.inject({
      method: 'POST',
      url: `/v2/agent/${projectId}${route}`,
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  /** The changes stored with a job's runs, oldest first. */
  const runChanges = async (jobId: string) =>
    (
      await t.app.store.db
        .selectFrom('job_runs')
        .select('changes')
        .where('job_id', '=', jobId)
        .orderBy('seq')
        .execute()
    ).map((r) => parseChangeRequests(r.changes));

  test('entries and the prompt’s URLs of the project’s repository are stored with the run; other URLs stay text', async () => {
    const res = await post('/job', {
      prompt:
        'Document https://github.com/acme/docs/pull/7 and https://github.com/acme/docs/commit/ABCDEF1 — not https://github.com/other/repo/pull/9 (nor https://github.com/acme/docs-old/pull/3).',
      changes: [
        { repository: 'docs', pullRequest: 42 },
        { repository: `${DOCS}.git`, commit: '0123456789abcdef0123456789abcdef01234567' },
        { repository: 'docs', range: 'v1.0..main' },
        { repository: 'docs', pullRequest: 7 },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    const job = res.json();
    const pending = (kind: string, number: number | null, path: string) => ({
      repository: 'docs',
      kind,
      number,
      sha: null,
      url: `${DOCS}${path}`,
      title: null,
    });
    const listed = [
      pending('pull-request', 42, '/pull/42'),
      pending('commit', null, '/commit/0123456789abcdef0123456789abcdef01234567'),
      pending('range', null, '/compare/v1.0...main'),
      pending('pull-request', 7, '/pull/7'),
      pending('commit', null, '/commit/abcdef1'),
    ];
    assert.deepEqual(job.changes, listed, 'listed from creation, resolved by the first run');
    assert.deepEqual((await t.app.jobs.get(projectId, job.id)).changes, listed, 'as stored');
    assert.deepEqual(await runChanges(job.id), [
      [
        { repository: 'docs', kind: 'pull-request', number: 42 },
        { repository: 'docs', kind: 'commit', sha: '0123456789abcdef0123456789abcdef01234567' },
        { repository: 'docs', kind: 'range', base: 'v1.0', head: 'main' },
        { repository: 'docs', kind: 'pull-request', number: 7 },
        { repository: 'docs', kind: 'commit', sha: 'abcdef1' },
      ],
    ]);
  });

  test('a context repository is named by its name or its URL, in changes and in the prompt', async () => {
    await t.app.contextRepositories.add(projectId, {
      name: 'api',
      repository: 'https://github.com/acme/api',
    });
    const res = await post('/job', {
      prompt: 'Provided code change: https://github.com/acme/api/pull/5.',
      changes: [
        { repository: 'api', pullRequest: 3 },
        { repository: 'https://github.com/acme/api', commit: 'abcdef1234' },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      res.json().changes.map((c: { url: string | null }) => c.url),
      [
        'https://github.com/acme/api/pull/3',
        'https://github.com/acme/api/commit/abcdef1234',
        'https://github.com/acme/api/pull/5',
      ],
    );
    assert.deepEqual(await runChanges(res.json().id), [
      [
        { repository: 'api', kind: 'pull-request', number: 3 },
        { repository: 'api', kind: 'commit', sha: 'abcdef1234' },
        { repository: 'api', kind: 'pull-request', number: 5 },
      ],
    ]);
  });

  /** Ends a job's run as failed, as a worker would, so that it takes a follow-up or a retry. */
  const markFailed = async (jobId: string) => {
    await t.app.store.db
      .updateTable('jobs')
      .set({ status: 'failed', error_code: 'agent-gave-up', error_message: 'x' })
      .where('id', '=', jobId)
      .execute();
    await t.app.store.db
      .updateTable('job_runs')
      .set({ status: 'failed' })
      .where('job_id', '=', jobId)
      .execute();
  };

  test('a follow-up keeps the job’s changes and adds its own; a retry keeps them', async () => {
    const created = (await post('/job', { prompt: 'See https://github.com/acme/docs/pull/1' })).json();
    await markFailed(created.id);
    const message = await post(`/job/${created.id}/message`, {
      prompt: 'Also https://github.com/acme/docs/pull/1 and #2',
      changes: [{ repository: 'docs', pullRequest: 2 }],
    });
    assert.equal(message.statusCode, 200, message.body);
    await markFailed(created.id);
    assert.equal((await post(`/job/${created.id}/retry`, {})).statusCode, 200);
    const one = { repository: 'docs', kind: 'pull-request', number: 1 };
    const two = { repository: 'docs', kind: 'pull-request', number: 2 };
    assert.deepEqual(await runChanges(created.id), [[one], [one, two], [one, two]]);
  });

  test('a follow-up lists the changes it adds after those a run resolved', async () => {
    const created = (await post('/job', { prompt: 'See https://github.com/acme/docs/pull/1' })).json();
    assert.deepEqual(
      created.changes.map((c: { number: number }) => c.number),
      [1],
    );
    const resolved = {
      repository: 'docs',
      kind: 'pull-request',
      number: 1,
      sha: 'a'.repeat(40),
      url: 'https://github.com/acme/docs/pull/1',
      title: 'Add --verbose',
    };
    // What the first run's worker stored.
    await t.app.store.db
      .updateTable('jobs')
      .set({ changes: JSON.stringify([resolved]) })
      .where('id', '=', created.id)
      .execute();
    await markFailed(created.id);
    const message = await post(`/job/${created.id}/message`, {
      prompt: 'And this one',
      changes: [{ repository: 'docs', pullRequest: 2 }],
    });
    assert.equal(message.statusCode, 200, message.body);
    const listed = [
      resolved,
      {
        repository: 'docs',
        kind: 'pull-request',
        number: 2,
        sha: null,
        url: 'https://github.com/acme/docs/pull/2',
        title: null,
      },
    ];
    assert.deepEqual(message.json().changes, listed);
    assert.deepEqual((await t.app.jobs.get(projectId, created.id)).changes, listed);
    // A follow-up that adds nothing leaves them as they are.
    await markFailed(created.id);
    const again = await post(`/job/${created.id}/message`, { prompt: 'Shorter, please' });
    assert.deepEqual(again.json().changes, listed);
  });

  test('each host’s change URL: GitLab merge requests and compares, Gitea pulls', async () => {
    await t.app.contextRepositories.add(projectId, {
      name: 'lab',
      repository: 'https://gitlab.example.com/group/sub/lab',
      host: 'gitlab',
    });
    await t.app.contextRepositories.add(projectId, {
      name: 'tea',
      repository: 'https://gitea.example.com/org/tea',
      host: 'gitea',
    });
    const res = await post('/job', {
      prompt: 'Document these.',
      changes: [
        { repository: 'lab', pullRequest: 4 },
        { repository: 'lab', range: 'v1..v2' },
        { repository: 'tea', pullRequest: 6 },
        { repository: 'tea', commit: 'abcdef1' },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      res.json().changes.map((c: { url: string | null }) => c.url),
      [
        'https://gitlab.example.com/group/sub/lab/-/merge_requests/4',
        'https://gitlab.example.com/group/sub/lab/-/compare/v1...v2',
        'https://gitea.example.com/org/tea/pulls/6',
        'https://gitea.example.com/org/tea/commit/abcdef1',
      ],
    );
  });

  test('Mintlify v1: a change URL in the messages is taken the same way', async () => {
    const base = await t.listen();
    const hangUp = new AbortController();
    const res = await fetch(`${base}/v1/agent/${projectId}/job`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        messages: [{ role: 'user', content: 'Provided code change: https://github.com/acme/docs/pull/42.' }],
      }),
      signal: hangUp.signal,
    });
    const jobId = res.headers.get('x-session-id');
    hangUp.abort();
    assert.ok(jobId, `${res.status}`);
    assert.deepEqual(await runChanges(jobId), [[{ repository: 'docs', kind: 'pull-request', number: 42 }]]);
    assert.deepEqual(
      (await t.app.jobs.get(projectId, jobId)).changes.map((c) => c.url),
      ['https://github.com/acme/docs/pull/42'],
      'listed from creation',
    );
  });

  test('bad changes get 400 naming the entry, and nothing is created', async () => {
    const before = await t.app.store.db.selectFrom('jobs').select('id').execute();
    const cases: Array<[unknown, string]> = [
      [[{ repository: 'web', pullRequest: 1 }], 'changes.0.repository'],
      [[{ repository: 'https://github.com/other/repo', pullRequest: 1 }], 'changes.0.repository'],
      [[{ repository: 'docs', pullRequest: 0 }], 'changes.0'],
      [[{ repository: 'docs', commit: 'not-a-sha' }], 'changes.0'],
      [[{ repository: 'docs', range: 'main' }], 'changes.0'],
      [[{ repository: 'docs', pullRequest: 1, commit: 'abcdef1' }], 'changes.0'],
      [[{ pullRequest: 1 }], 'changes.0'],
      ['docs#1', 'changes'],
      [Array.from({ length: 21 }, (_, i) => ({ repository: 'docs', pullRequest: i + 1 })), 'changes'],
    ];
    for (const [changes, field] of cases) {
      const res = await post('/job', { prompt: 'x', changes });
      assert.equal(res.statusCode, 400, `${JSON.stringify(changes)}: ${res.body}`);
      const body = res.json();
      assert.equal(body.code, 'invalid-request');
      assert.ok(
        body.errors.some((f: { field: string }) => f.field === field || f.field.startsWith(`${field}.`)),
        `${JSON.stringify(changes)} names ${field}: ${JSON.stringify(body.errors)}`,
      );
    }
    // 20 entries plus a different change in the prompt make 21.
    const over = await post('/job', {
      prompt: 'https://github.com/acme/docs/pull/999',
      changes: Array.from({ length: 20 }, (_, i) => ({ repository: 'docs', pullRequest: i + 1 })),
    });
    assert.equal(over.statusCode, 400);
    assert.equal(over.json().errors[0].field, 'changes');
    assert.deepEqual(await t.app.store.db.selectFrom('jobs').select('id').execute(), before);
  });
});
