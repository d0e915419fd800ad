// Inbound code-host webhooks end to end over real HTTP on both databases (docs/automations.mdx): a signed
// merge event of each host becomes exactly one run and one job carrying the change; the same
// delivery again creates nothing; a bad signature gets 401 and stores nothing; own and filtered
// changes are recorded skipped with their reason.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HookHost } from '../../src/automations/code-events.ts';
import type { ContextRepositories } from '../../src/automations/repositories.ts';
import { createLogger } from '../../src/logger.ts';
import { AutomationLoop } from '../../src/worker/automation-loop.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { MERGE_SAMPLES, samplePayload, signedHeaders } from '../helpers/hook-deliveries.ts';

const SECRET = 'whsec-automation-test-0123456789';
/** What the server logged, one JSON line each. */
const logged: string[] = [];
const logLines = new Writable({
  write(chunk, _encoding, done) {
    logged.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});
const contexts: ContextRepositories = {
  accessFor: async () => [],
  webhookSecretFor: async (_projectId, name) => (name === 'docs' ? SECRET : undefined),
};

describe('POST /hooks/{projectId}/{name}', () => {
  let t: TestApp;
  let base: string;
  let loop: AutomationLoop;
  const projects: Record<HookHost, string> = { github: '', gitlab: '', gitea: '' };
  const automations: Record<HookHost, string> = { github: '', gitlab: '', gitea: '' };

  before(async () => {
    // The sample repositories are on github.com and the like: their commits are never read here.
    t = await startTestApp({
      contexts,
      changeDetails: async () => null,
      logger: createLogger('warn', logLines),
    });
    base = await t.listen();
    loop = new AutomationLoop(t.app, { pollSeconds: 0 });
    for (const host of ['github', 'gitlab', 'gitea'] as const) {
      const sample = MERGE_SAMPLES[host];
      const project = await t.app.projects.create({
        name: `Docs on ${host}`,
        repository: sample.repository,
        host,
        token: 'tok-automation-test-0123456789',
        ref: 'main',
        model: 'openai/gpt-test',
      });
      projects[host] = project.id;
      const automation = await t.app.automations.create(project.id, {
        name: 'Update docs',
        trigger: { type: 'code-change', repositories: ['docs'] },
        instruction: 'Update the docs for this change.',
      });
      automations[host] = automation.id;
    }
  });
  after(() => t.close());

  const deliver = (projectId: string, body: string, headers: Record<string, string>) =>
    fetch(`${base}/hooks/${projectId}/docs`, { method: 'POST', headers, body }).then(async (res) => ({
      status: res.status,
      body: await res.text(),
    }));
  const count = async (table: 'hook_deliveries' | 'automation_runs' | 'jobs', projectId: string) =>
    Number(
      (
        await t.app.store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', projectId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  for (const host of ['github', 'gitlab', 'gitea'] as const) {
    test(`${host}: a signed merge event → 202, one run and one job carrying the change; the same delivery again → nothing new`, async () => {
      const sample = MERGE_SAMPLES[host];
      const projectId = projects[host];
      const payload = samplePayload(sample.payload);
      // GitLab's sample carries the label `No-Docs` (the default skip label): the next test uses it.
      if (host === 'gitlab') payload.labels = [];
      const body = JSON.stringify(payload);
      const headers = signedHeaders(host, sample.event, body, SECRET, `delivery-${host}-1`);
      const first = await deliver(projectId, body, headers);
      assert.equal(first.status, 202, first.body);
      await loop.processDeliveries();
      const { runs } = await t.app.automations.runs(projectId, automations[host]);
      assert.equal(runs.length, 1);
      const [run] = runs;
      assert.deepEqual(run!.trigger.changes, [{ repository: 'docs', pullRequest: sample.number }]);
      assert.equal(run!.outcome, 'running');
      assert.ok(run!.jobId, 'the run started a job');
      const changes = await t.app.store.db
        .selectFrom('job_runs')
        .select('changes')
        .where('job_id', '=', run!.jobId!)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(changes.changes!), [
        { repository: 'docs', kind: 'pull-request', number: sample.number },
      ]);

      const again = await deliver(projectId, body, headers);
      assert.equal(again.status, 202, again.body);
      assert.equal(JSON.parse(again.body).duplicate, true);
      await loop.processDeliveries();
      assert.equal(await count('hook_deliveries', projectId), 1);
      assert.equal(await count('automation_runs', projectId), 1);
      assert.equal(await count('jobs', projectId), 1);

      // A redelivery under a new id (a host's manual "redeliver" of the same change) is stored but runs nothing.
      const other = await deliver(
        projectId,
        body,
        signedHeaders(host, sample.event, body, SECRET, `delivery-${host}-2`),
      );
      assert.equal(other.status, 202);
      await loop.processDeliveries();
      assert.equal(await count('hook_deliveries', projectId), 2);
      assert.equal(await count('automation_runs', projectId), 1);
      assert.equal(await count('jobs', projectId), 1);
    });

    test(`${host}: a bad or missing signature → 401 and nothing stored`, async () => {
      const sample = MERGE_SAMPLES[host];
      const projectId = projects[host];
      const before = await count('hook_deliveries', projectId);
      const body = JSON.stringify(samplePayload(sample.payload));
      const wrong = await deliver(projectId, body, signedHeaders(host, sample.event, body, `${SECRET}x`));
      assert.equal(wrong.status, 401, wrong.body);
      assert.equal(JSON.parse(wrong.body).code, 'unauthorized');
      // Signed, then changed on the way.
      const tampered = await deliver(
        projectId,
        body.replace('"main"', '"mainx"'),
        signedHeaders(host, sample.event, body, SECRET),
      );
      assert.equal(tampered.status, host === 'gitlab' ? 202 : 401, tampered.body);
      const {
        'x-hub-signature-256': _a,
        'x-gitlab-token': _b,
        'x-gitea-signature': _c,
        ...unsigned
      } = signedHeaders(host, sample.event, body, SECRET);
      const missing = await deliver(projectId, body, unsigned);
      assert.equal(missing.status, 401);
      assert.equal(await count('hook_deliveries', projectId), before + (host === 'gitlab' ? 1 : 0));
      await loop.processDeliveries();
    });
  }

  test('every unauthenticated request gets one byte-identical 401: unknown project or name, missing, malformed, wrong or another host’s signature', async () => {
    const sample = MERGE_SAMPLES.github;
    const body = JSON.stringify(samplePayload(sample.payload));
    const signed = signedHeaders('github', sample.event, body, SECRET);
    const { 'x-hub-signature-256': _signature, ...unsigned } = signed;
    const before = await count('hook_deliveries', projects.github);
    const attempts: [string, string, Record<string, string>][] = [
      ['unknown project', 'prj_00000000000000000000000000/docs', signed],
      ['unknown repository name', `${projects.github}/api`, signed],
      ['missing signature', `${projects.github}/docs`, unsigned],
      ['malformed signature', `${projects.github}/docs`, { ...unsigned, 'x-hub-signature-256': 'sha256=zz' }],
      [
        'wrong signature',
        `${projects.github}/docs`,
        signedHeaders('github', sample.event, body, `${SECRET}x`),
      ],
      [
        'another host’s header',
        `${projects.github}/docs`,
        signedHeaders('gitlab', 'Push Hook', body, SECRET),
      ],
      ['GitLab: wrong token', `${projects.gitlab}/docs`, signedHeaders('gitlab', 'Push Hook', body, 'nope')],
      ['Gitea: GitHub’s header', `${projects.gitea}/docs`, signed],
    ];
    const answers = new Map<string, string[]>();
    for (const [what, url, headers] of attempts) {
      const res = await fetch(`${base}/hooks/${url}`, { method: 'POST', headers, body });
      const answer = `${res.status} ${res.headers.get('content-type')}\n${await res.text()}`;
      answers.set(answer, [...(answers.get(answer) ?? []), what]);
    }
    assert.equal(answers.size, 1, [...answers].map(([a, w]) => `${w.join(', ')}:\n${a}`).join('\n\n'));
    // The server log says why, each time, without a secret.
    const reasons = logged
      .filter((line) => line.includes('webhook refused'))
      .map((line) => JSON.parse(line).reason);
    for (const reason of [
      /no such project or repository/,
      /X-Hub-Signature-256 is missing/,
      /X-Hub-Signature-256 is not "sha256="/,
      /X-Hub-Signature-256 does not match/,
      /X-Gitlab-Token does not match/,
      /X-Gitea-Signature is missing/,
    ]) {
      assert.ok(
        reasons.some((r) => reason.test(r)),
        `${reason} in ${JSON.stringify(reasons)}`,
      );
    }
    assert.ok(!logged.some((line) => line.includes(SECRET)), 'a secret was logged');
    assert.match([...answers.keys()][0]!, /^401 application\/problem\+json.*\n.*"code":"unauthorized"/);
    assert.equal(await count('hook_deliveries', projects.github), before);
  });

  test('an unknown project or repository name → 401 alike, nothing stored', async () => {
    const sample = MERGE_SAMPLES.github;
    const body = JSON.stringify(samplePayload(sample.payload));
    const headers = signedHeaders('github', sample.event, body, SECRET);
    for (const url of [`/hooks/prj_00000000000000000000000000/docs`, `/hooks/${projects.github}/api`]) {
      const res = await fetch(`${base}${url}`, { method: 'POST', headers, body });
      assert.equal(res.status, 401, url);
    }
  });

  test('a body over 25 MiB → 413, nothing stored; a signed body that is no event → 202, stored, ignored; no content type is fine', async () => {
    const projectId = projects.github;
    const before = await count('hook_deliveries', projectId);
    const runsBefore = await count('automation_runs', projectId);
    const huge = 'x'.repeat(25 * 1024 * 1024 + 1);
    const tooLarge = await deliver(projectId, huge, {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
    });
    assert.equal(tooLarge.status, 413, tooLarge.body);
    assert.match(JSON.parse(tooLarge.body).detail, /larger than 25 MiB$/);
    // Sent in chunks (no Content-Length): the same answer once the body passes the limit, whether
    // the URL exists or not (a URL nobody configured must not answer 401 where one that exists
    // answers 413).
    const chunk = new Uint8Array(1024 * 1024).fill(0x78);
    for (const url of [`${projectId}/docs`, 'prj_00000000000000000000000000/docs', `${projectId}/nope`]) {
      let sent = 0;
      const chunked = await fetch(`${base}/hooks/${url}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
        },
        body: new ReadableStream({
          pull(controller) {
            if (sent++ > 26) controller.close();
            else controller.enqueue(chunk);
          },
        }),
        duplex: 'half',
      } as RequestInit);
      assert.equal(chunked.status, 413, url);
      assert.match(((await chunked.json()) as { detail: string }).detail, /larger than 25 MiB$/);
    }
    assert.equal(await count('hook_deliveries', projectId), before);
    const odd = 'not json at all';
    const { 'content-type': _type, ...headers } = signedHeaders(
      'github',
      'pull_request',
      odd,
      SECRET,
      'odd-1',
    );
    const res = await deliver(projectId, odd, headers);
    assert.equal(res.status, 202, res.body);
    await loop.processDeliveries();
    const stored = await t.app.store.db
      .selectFrom('hook_deliveries')
      .select(['result', 'processed_at'])
      .where('delivery_id', '=', 'odd-1')
      .executeTakeFirstOrThrow();
    assert.ok(stored.processed_at);
    assert.match(stored.result!, /^ignored: the body is not a JSON object/);
    assert.equal(await count('automation_runs', projectId), runsBefore, 'no run');
  });

  test('a signed body of 20 MB of nesting: /healthz answers promptly while it is processed, memory stays bounded, the delivery is ignored with the reason', async () => {
    const projectId = projects.github;
    const body = `{"a":${'['.repeat(10_000_000)}${']'.repeat(10_000_000)}}`;
    const res = await deliver(
      projectId,
      body,
      signedHeaders('github', 'pull_request', body, SECRET, 'deep-1'),
    );
    assert.equal(res.status, 202, res.body);
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    let processing = true;
    const processed = loop.processDeliveries().finally(() => {
      processing = false;
    });
    const latencies: number[] = [];
    do {
      const started = performance.now();
      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 200);
      await health.text();
      latencies.push(performance.now() - started);
      peak = Math.max(peak, process.memoryUsage().rss);
      await sleep(5);
    } while (processing);
    await processed;
    peak = Math.max(peak, process.memoryUsage().rss);
    const slowest = Math.max(...latencies);
    assert.ok(slowest < 1_500, `/healthz took ${Math.round(slowest)} ms while the body was processed`);
    const grown = (peak - rssBefore) / 1024 / 1024;
    assert.ok(grown < 300, `resident memory grew by ${Math.round(grown)} MiB`);
    const stored = await t.app.store.db
      .selectFrom('hook_deliveries')
      .select(['result'])
      .where('delivery_id', '=', 'deep-1')
      .executeTakeFirstOrThrow();
    assert.match(stored.result!, /^ignored: the body is not parsed: it is nested more than 256 levels deep/);
  });

  test('ping → 200 and nothing stored', async () => {
    const body = JSON.stringify(samplePayload('github-ping'));
    const projectId = projects.github;
    const before = await count('hook_deliveries', projectId);
    const res = await deliver(projectId, body, signedHeaders('github', 'ping', body, SECRET));
    assert.equal(res.status, 200, res.body);
    assert.equal(await count('hook_deliveries', projectId), before);
  });

  test('own changes and labelled changes are recorded skipped with their reason, and start no job', async () => {
    const projectId = projects.github;
    const jobsBefore = await count('jobs', projectId);
    const own = samplePayload('github-pull-request-merged');
    own.pull_request.number = 101;
    own.number = 101;
    own.pull_request.merge_commit_sha = 'a'.repeat(40);
    own.pull_request.head.sha = 'b'.repeat(40);
    own.pull_request.head.ref = 'docwright/update-widgets';
    const labelled = samplePayload('github-pull-request-merged');
    labelled.pull_request.number = 102;
    labelled.number = 102;
    labelled.pull_request.merge_commit_sha = 'c'.repeat(40);
    labelled.pull_request.head.sha = 'd'.repeat(40);
    labelled.pull_request.labels = [{ name: 'No-Docs' }];
    for (const payload of [own, labelled]) {
      const body = JSON.stringify(payload);
      const res = await deliver(projectId, body, signedHeaders('github', 'pull_request', body, SECRET));
      assert.equal(res.status, 202);
    }
    await loop.processDeliveries();
    const { runs } = await t.app.automations.runs(projectId, automations.github);
    const byNumber = new Map(
      runs.map((r) => [(r.trigger.changes[0] as { pullRequest: number }).pullRequest, r]),
    );
    assert.equal(byNumber.get(101)?.outcome, 'skipped');
    assert.equal(byNumber.get(101)?.reason, 'own-change');
    assert.equal(byNumber.get(102)?.outcome, 'skipped');
    assert.equal(byNumber.get(102)?.reason, 'label');
    assert.equal(byNumber.get(101)?.jobId, null);
    // GitLab's sample merge request is labelled `No-Docs` (any case matches the default skip label).
    const gitlab = samplePayload('gitlab-merge-request-merged');
    gitlab.object_attributes.iid = 8;
    gitlab.object_attributes.merge_commit_sha = '1'.repeat(40);
    gitlab.object_attributes.last_commit.id = '2'.repeat(40);
    const body = JSON.stringify(gitlab);
    const res = await deliver(
      projects.gitlab,
      body,
      signedHeaders('gitlab', 'Merge Request Hook', body, SECRET),
    );
    assert.equal(res.status, 202);
    await loop.processDeliveries();
    const gitlabRuns = (await t.app.automations.runs(projects.gitlab, automations.gitlab)).runs;
    const run8 = gitlabRuns.find((r) => (r.trigger.changes[0] as { pullRequest: number }).pullRequest === 8);
    assert.equal(run8?.outcome, 'skipped');
    assert.equal(run8?.reason, 'label');
    assert.equal(await count('jobs', projectId), jobsBefore);
  });

  /** Delivers each signed GitHub event to the github project, processes them, and answers each stored result. */
  const deliverAndProcess = async (events: [string, unknown][]) => {
    const ids: string[] = [];
    for (const [event, payload] of events) {
      const body = JSON.stringify(payload);
      const id = `delivery-${randomUUID()}`;
      ids.push(id);
      const res = await deliver(projects.github, body, signedHeaders('github', event, body, SECRET, id));
      assert.equal(res.status, 202, res.body);
    }
    // Pushes processed at once: they need not wait for a pull request event here.
    await new AutomationLoop(t.app, { pollSeconds: 0, pushSettleMs: 0 }).processDeliveries();
    const rows = await t.app.store.db
      .selectFrom('hook_deliveries')
      .select(['delivery_id', 'result'])
      .where('delivery_id', 'in', ids)
      .execute();
    return ids.map((id) => rows.find((r) => r.delivery_id === id)?.result);
  };
  /** A merged pull request of the github sample with its own number and commits. */
  const mergedPull = (number: number) => {
    const payload = samplePayload('github-pull-request-merged');
    payload.number = number;
    payload.pull_request.number = number;
    payload.pull_request.merge_commit_sha = number.toString(16).padStart(40, 'c');
    payload.pull_request.head.sha = number.toString(16).padStart(40, 'd');
    return payload;
  };
  /** A push of the github sample with one commit of its own. */
  const push = (sha: string) => {
    const payload = samplePayload('github-push');
    payload.after = sha;
    payload.commits = [{ ...payload.commits.at(-1), id: sha, message: 'Change the export' }];
    payload.head_commit = payload.commits[0];
    return payload;
  };

  test('a signed event about another repository than the hook URL’s is stored and ignored: no run, no job', async () => {
    const runsBefore = await count('automation_runs', projects.github);
    const jobsBefore = await count('jobs', projects.github);
    const pull = mergedPull(140);
    pull.repository.html_url = 'https://github.com/acme/billing';
    const pushed = push('5'.repeat(40));
    pushed.repository.html_url = 'https://github.com/acme/billing';
    const results = await deliverAndProcess([
      ['pull_request', pull],
      ['push', pushed],
    ]);
    for (const result of results) {
      assert.equal(
        result,
        'ignored: the event is about https://github.com/acme/billing, not https://github.com/acme/api',
      );
    }
    assert.equal(await count('automation_runs', projects.github), runsBefore);
    assert.equal(await count('jobs', projects.github), jobsBefore);
    // The same events about the hook URL's repository do run: the repository was what ignored them.
    const ran = await deliverAndProcess([['pull_request', mergedPull(141)]]);
    assert.deepEqual(ran, ['runs: 1']);
  });

  test('pushes and merges into a branch other than the watched one start nothing', async () => {
    const runsBefore = await count('automation_runs', projects.github);
    const jobsBefore = await count('jobs', projects.github);
    const pull = mergedPull(150);
    pull.pull_request.base.ref = 'develop';
    const pushed = push('6'.repeat(40));
    pushed.ref = 'refs/heads/develop';
    const results = await deliverAndProcess([
      ['pull_request', pull],
      ['push', pushed],
    ]);
    assert.deepEqual(results, [
      'ignored: a change of branch develop, not the watched main',
      'ignored: a change of branch develop, not the watched main',
    ]);
    assert.equal(await count('automation_runs', projects.github), runsBefore);
    assert.equal(await count('jobs', projects.github), jobsBefore);
    // Into main, the same push runs: the branch was what ignored it.
    assert.deepEqual(await deliverAndProcess([['push', push('7'.repeat(40))]]), ['runs: 1']);
  });

  test('an automation created after a merge never runs for its webhook, however late, while one older runs once', async () => {
    const older = await t.app.automations.get(projects.github, automations.github);
    // The merge falls between the two automations' creation, however fast the tests before ran.
    await sleep(5);
    const later = await t.app.automations.create(projects.github, {
      name: 'Created after the merge',
      trigger: { type: 'code-change', repositories: ['docs'] },
      instruction: 'Update the docs for this change.',
    });
    try {
      const pull = mergedPull(170);
      const between = (Date.parse(older.createdAt) + Date.parse(later.createdAt)) / 2;
      pull.pull_request.merged_at = new Date(Math.floor(between)).toISOString();
      // Delivered late, then redelivered under a new id after the older automation recorded it.
      assert.deepEqual(await deliverAndProcess([['pull_request', pull]]), ['runs: 1']);
      assert.deepEqual(await deliverAndProcess([['pull_request', pull]]), ['runs: 0']);
      const runs = await t.app.automations.runs(projects.github, automations.github, {
        limit: '100',
      });
      assert.equal(
        runs.runs.filter((r) => (r.trigger.changes[0] as { pullRequest: number }).pullRequest === 170).length,
        1,
      );
      assert.deepEqual((await t.app.automations.runs(projects.github, later.id)).runs, []);
    } finally {
      await t.app.automations.delete(projects.github, later.id);
    }
  });

  test('a merge’s push arriving before its pull request event waits, so that the pull request makes the run', async () => {
    const projectId = projects.github;
    const pull = samplePayload('github-pull-request-merged');
    pull.number = 120;
    pull.pull_request.number = 120;
    pull.pull_request.merge_commit_sha = '3'.repeat(40);
    pull.pull_request.head.sha = '4'.repeat(40);
    pull.pull_request.labels = [{ name: 'no-docs' }];
    const push = samplePayload('github-push');
    push.after = '3'.repeat(40);
    push.commits = [
      { ...push.commits.at(-1), id: '3'.repeat(40), message: 'Merge pull request #120 from acme/feature' },
    ];
    const runsOf = async () =>
      (await t.app.automations.runs(projectId, automations.github, { limit: '100' })).runs;
    const before = (await runsOf()).length;
    const pushBody = JSON.stringify(push);
    assert.equal(
      (await deliver(projectId, pushBody, signedHeaders('github', 'push', pushBody, SECRET))).status,
      202,
    );
    await loop.processDeliveries();
    assert.equal((await runsOf()).length, before, 'the push waits');
    const pullBody = JSON.stringify(pull);
    assert.equal(
      (await deliver(projectId, pullBody, signedHeaders('github', 'pull_request', pullBody, SECRET))).status,
      202,
    );
    await loop.processDeliveries();
    const runs = await runsOf();
    assert.equal(runs.length, before + 1);
    assert.deepEqual(runs[0]!.trigger.changes, [{ repository: 'docs', pullRequest: 120 }]);
    assert.equal(runs[0]!.reason, 'label');
    // Once the push has waited, it is processed: the same change, nothing new.
    await new AutomationLoop(t.app, { pollSeconds: 0, pushSettleMs: 0 }).processDeliveries();
    assert.equal((await runsOf()).length, before + 1);
    const waiting = await t.app.store.db
      .selectFrom('hook_deliveries')
      .select('id')
      .where('processed_at', 'is', null)
      .execute();
    assert.deepEqual(waiting, []);
  });

  test('a running loop processes a burst of deliveries once it ends, each once', async () => {
    const projectId = projects.github;
    const loop = new AutomationLoop(t.app, { pollSeconds: 0, checkMs: 600_000 });
    loop.start();
    try {
      const numbers = [301, 302, 303, 304, 305];
      const answers = await Promise.all(
        numbers.map((number) => {
          const payload = samplePayload('github-pull-request-merged');
          payload.number = number;
          payload.pull_request.number = number;
          payload.pull_request.merge_commit_sha = number.toString(16).padStart(40, 'a');
          payload.pull_request.head.sha = number.toString(16).padStart(40, 'b');
          const body = JSON.stringify(payload);
          return deliver(projectId, body, signedHeaders('github', 'pull_request', body, SECRET));
        }),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        [202, 202, 202, 202, 202],
      );
      const burst = async () =>
        (await t.app.automations.runs(projectId, automations.github)).runs.filter((r) =>
          numbers.includes((r.trigger.changes[0] as { pullRequest: number }).pullRequest),
        );
      // The periodic check is ten minutes away: only the wake after the burst can process them.
      for (let waited = 0; (await burst()).length < numbers.length && waited < 10_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await loop.idle();
      assert.deepEqual(
        (await burst()).map((r) => (r.trigger.changes[0] as { pullRequest: number }).pullRequest).sort(),
        numbers,
      );
    } finally {
      await loop.stop();
    }
  });

  test('a delivery stored before a crash is processed at the next start', async () => {
    const projectId = projects.gitea;
    const payload = samplePayload('gitea-pull-request-merged');
    payload.pull_request.number = 16;
    payload.number = 16;
    payload.pull_request.merge_commit_sha = 'e'.repeat(40);
    payload.pull_request.head.sha = 'f'.repeat(40);
    const body = JSON.stringify(payload);
    const res = await deliver(projectId, body, signedHeaders('gitea', 'pull_request', body, SECRET));
    assert.equal(res.status, 202);
    // No loop ran: the delivery waits. A new loop (the next process) takes it at start.
    const restarted = new AutomationLoop(t.app, { pollSeconds: 0 });
    restarted.start();
    await restarted.idle();
    await restarted.stop();
    const { runs } = await t.app.automations.runs(projectId, automations.gitea);
    assert.ok(
      runs.some((r) => (r.trigger.changes[0] as { pullRequest: number }).pullRequest === 16 && r.jobId),
    );
  });
});

describe('a context repository’s webhook (the context repository service)', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await startTestApp();
    base = await t.listen();
  });
  after(() => t.close());

  test('the secret context add printed verifies the delivery; the run’s job carries the context repository’s change', async () => {
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: 'https://github.com/acme/docs',
      token: 'tok-context-hook-0123456789',
      ref: 'main',
      model: 'openai/gpt-test',
    });
    const added = await t.app.contextRepositories.add(project.id, {
      name: 'api',
      repository: 'https://github.com/acme/api',
      ref: 'main',
    });
    assert.match(added.webhookUrl, new RegExp(`/hooks/${project.id}/api$`));
    const automation = await t.app.automations.create(project.id, {
      name: 'Update docs',
      trigger: { type: 'code-change' },
      instruction: 'Update the docs for this change.',
    });
    const body = JSON.stringify(samplePayload('github-pull-request-merged'));
    const send = (secret: string) =>
      fetch(`${base}/hooks/${project.id}/api`, {
        method: 'POST',
        headers: signedHeaders('github', 'pull_request', body, secret),
        body,
      });
    assert.equal((await send('not-the-secret')).status, 401);
    assert.equal((await send(added.webhookSecret)).status, 202);
    await new AutomationLoop(t.app, { pollSeconds: 0 }).processDeliveries();
    const { runs } = await t.app.automations.runs(project.id, automation.id);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0]!.trigger.changes, [{ repository: 'api', pullRequest: 42 }]);
    const run = await t.app.store.db
      .selectFrom('job_runs')
      .select('changes')
      .where('job_id', '=', runs[0]!.jobId!)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(run.changes!), [{ repository: 'api', kind: 'pull-request', number: 42 }]);
    // An automation naming a repository the project does not have is refused, naming the field.
    await assert.rejects(
      t.app.automations.create(project.id, {
        name: 'x',
        trigger: { type: 'code-change', repositories: ['sdk'] },
        instruction: 'x',
      }),
      (error: { fields?: { field: string }[] }) => error.fields?.[0]?.field === 'trigger.repositories.0',
    );
  });

  test('a hook URL’s secret belongs to its project: A’s secret on B’s URL for a repository of the same name → 401, nothing stored', async () => {
    const [a, b] = await Promise.all(
      ['A', 'B'].map((name) =>
        t.app.projects.create({
          name: `Docs ${name}`,
          repository: `https://github.com/acme/docs-${name.toLowerCase()}`,
          token: 'tok-context-hook-0123456789',
          ref: 'main',
          model: 'openai/gpt-test',
        }),
      ),
    );
    const added = new Map<string, string>();
    for (const project of [a!, b!]) {
      const { webhookSecret } = await t.app.contextRepositories.add(project.id, {
        name: 'sdk',
        repository: 'https://github.com/acme/api',
        ref: 'main',
      });
      added.set(project.id, webhookSecret);
      await t.app.automations.create(project.id, {
        name: 'Update docs',
        trigger: { type: 'code-change' },
        instruction: 'Update the docs for this change.',
      });
    }
    const body = JSON.stringify(samplePayload('github-pull-request-merged'));
    const send = (projectId: string, secret: string) =>
      fetch(`${base}/hooks/${projectId}/sdk`, {
        method: 'POST',
        headers: signedHeaders('github', 'pull_request', body, secret),
        body,
      });
    const stored = async (projectId: string) =>
      (
        await t.app.store.db
          .selectFrom('hook_deliveries')
          .select('id')
          .where('project_id', '=', projectId)
          .execute()
      ).length;
    // A's own URL first, so that A's secret is what a verifier remembered last.
    assert.equal((await send(a!.id, added.get(a!.id)!)).status, 202);
    const refused = await send(b!.id, added.get(a!.id)!);
    assert.equal(refused.status, 401);
    assert.equal(await stored(b!.id), 0, 'nothing stored for B');
    await new AutomationLoop(t.app, { pollSeconds: 0 }).processDeliveries();
    const runsOf = async (projectId: string) =>
      (
        await t.app.store.db
          .selectFrom('automation_runs')
          .select('id')
          .where('project_id', '=', projectId)
          .execute()
      ).length;
    assert.deepEqual([await runsOf(a!.id), await runsOf(b!.id)], [1, 0]);
    // B's own secret verifies on B's URL: the URL works, A's secret was what it refused.
    assert.equal((await send(b!.id, added.get(b!.id)!)).status, 202);
  });

  test('the docs repository’s hook: refused until `project hook-secret` makes its secret; a signed push then starts the docs-push automation; a replaced secret no longer verifies', async () => {
    const create = (name: string) =>
      t.app.projects.create({
        name,
        repository: 'https://github.com/acme/api',
        token: 'tok-docs-hook-0123456789',
        ref: 'main',
        model: 'openai/gpt-test',
      });
    const body = JSON.stringify(samplePayload('github-push'));
    const send = (projectId: string, secret: string) =>
      fetch(`${base}/hooks/${projectId}/docs`, {
        method: 'POST',
        headers: signedHeaders('github', 'push', body, secret),
        body,
      });

    const without = await create('Docs without a hook secret');
    assert.deepEqual(await t.app.contextRepositories.docsWebhook(without.id), {
      name: 'docs',
      webhookUrl: `http://localhost:8080/hooks/${without.id}/docs`,
      hasSecret: false,
    });
    assert.equal((await send(without.id, 'any-secret-at-all')).status, 401);

    const project = await create('Docs with a hook secret');
    const automation = await t.app.automations.create(project.id, {
      name: 'Enforce the style guide',
      trigger: { type: 'docs-push' },
      instruction: 'Apply the style guide to what was pushed.',
    });
    const first = await t.app.contextRepositories.newDocsWebhookSecret(project.id);
    const second = await t.app.contextRepositories.newDocsWebhookSecret(project.id);
    assert.notEqual(first.webhookSecret, second.webhookSecret);
    assert.equal((await t.app.contextRepositories.docsWebhook(project.id)).hasSecret, true);
    const row = await t.app.store.db
      .selectFrom('projects')
      .select('docs_webhook_secret')
      .where('id', '=', project.id)
      .executeTakeFirstOrThrow();
    assert.ok(
      row.docs_webhook_secret && !row.docs_webhook_secret.includes(second.webhookSecret),
      'sealed at rest',
    );

    assert.equal((await send(project.id, first.webhookSecret)).status, 401, 'the replaced secret');
    assert.equal((await send(project.id, second.webhookSecret)).status, 202);
    await new AutomationLoop(t.app, { pollSeconds: 0, pushSettleMs: 0 }).processDeliveries();
    const { runs } = await t.app.automations.runs(project.id, automation.id);
    assert.equal(runs.length, 1);
    const pushed = samplePayload('github-push');
    assert.deepEqual(runs[0]!.trigger.changes, [
      { repository: 'docs', range: `${pushed.before}..${pushed.after}` },
    ]);
    assert.ok(runs[0]!.jobId);
    await assert.rejects(
      t.app.contextRepositories.newDocsWebhookSecret('prj_00000000000000000000000000'),
      (error: { code?: string }) => error.code === 'project-not-found',
    );
  });
});
