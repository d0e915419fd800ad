// Webhooks in process (docs/webhooks.mdx): endpoints and their secrets, messages written with the job
// change they report, and the dispatcher against a receiver on loopback — signatures checked
// with the `standardwebhooks` reference library, the retry schedule walked on a test clock.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { newWebhookDeliveryId } from '../../src/ids.ts';
import { claimNextRun } from '../../src/jobs/queue/claim.ts';
import { failRuns } from '../../src/jobs/queue/fail-runs.ts';
import { finishRun } from '../../src/jobs/queue/finish.ts';
import type { RunOutcome } from '../../src/jobs/run-outcome.ts';
import { enqueueJobMessage } from '../../src/jobs/webhook-outbox.ts';
import { anyDeliveryDue, claimDueDeliveries } from '../../src/webhooks/claim.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from '../../src/webhooks/schedule.ts';
import { createWebhookService } from '../../src/webhooks/webhooks.ts';
import { WebhookDispatcher } from '../../src/worker/webhook-dispatcher.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../doubles/webhook-receiver.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

/** The app's clock: real time plus an offset the tests move forward. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

describe('webhooks (in process)', () => {
  let t: TestApp;
  let p: SeededProject;
  let receiver: WebhookReceiver;
  let other: WebhookReceiver;
  const dispatchers: WebhookDispatcher[] = [];
  const startDispatcher = (options: ConstructorParameters<typeof WebhookDispatcher>[1] = {}) => {
    const dispatcher = new WebhookDispatcher(t.app, { pollMs: 30, random: () => 0.5, ...options });
    dispatcher.start();
    dispatchers.push(dispatcher);
    return dispatcher;
  };
  const db = () => t.app.store.db;
  const deliveries = () =>
    db()
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('project_id', '=', p.projectId)
      .orderBy('id')
      .execute();
  const messages = () =>
    db()
      .selectFrom('webhook_messages')
      .selectAll()
      .where('project_id', '=', p.projectId)
      .orderBy('id')
      .execute();
  const createJob = async (prompt = 'Document the flag') =>
    (await t.app.jobs.create(p.projectId, { prompt })).job.id;
  /** Ends the job's queued run the way a worker does. */
  const finishJob = async (outcome: RunOutcome, workerId = 'test-worker') => {
    const run = (
      await claimNextRun(t.app, {
        workerId,
        now: t.app.now(),
        leaseMs: 60_000,
        projectConcurrency: 10,
      })
    )?.run;
    assert.ok(run, 'a queued run');
    return { run, finished: await finishRun(t.app, { run, workerId, outcome, now: t.app.now() }) };
  };
  const completed: RunOutcome = {
    status: 'completed',
    prLink: null,
    branch: 'docwright/x',
    summary: 'Done.',
  };

  before(async () => {
    t = await startTestApp({ env: { DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE: '1' }, now: clock });
    [receiver, other] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
  });
  beforeEach(async () => {
    offsetMs = 0;
    p = await seedProject(t.app, { rateLimit: 1000 });
    receiver.reset();
    other.reset();
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.stop(0)));
    // Nothing a test left queued may reach the next test's receiver.
    await db().deleteFrom('webhook_endpoints').execute();
    rmSync(p.repository, { recursive: true, force: true });
  });
  after(async () => {
    await Promise.all([t?.close(), receiver?.close(), other?.close()]);
  });

  test('an endpoint gets a whsec_ secret shown once; it is stored sealed and listed never', async () => {
    const created = await t.app.webhooks.createEndpoint(p.projectId, { url: `${receiver.url}/hook` });
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.deepEqual(created.events, ['job.completed', 'job.failed', 'job.archived']);
    assert.equal(created.enabled, true);
    const listed = await t.app.webhooks.listEndpoints(p.projectId);
    assert.deepEqual(
      listed,
      [{ ...created, secret: undefined }].map(({ secret: _s, ...rest }) => rest),
    );
    assert.ok(!JSON.stringify(listed).includes('whsec_'));
    assert.ok(!JSON.stringify(await t.app.webhooks.getEndpoint(created.id)).includes('whsec_'));
    const row = await db().selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
    assert.ok(!row.secret.includes(created.secret.slice(6)), 'the stored secret is not the secret');
    assert.match(row.secret, /^v1\./, 'sealed with the project SecretBox');
    assert.equal(t.app.webhooks.openSecret(row.secret), created.secret);
    const second = await t.app.webhooks.createEndpoint(p.projectId, { url: `${receiver.url}/hook` });
    assert.notEqual(second.secret, created.secret);
  });

  test('bad endpoints are refused with the offending field named', async () => {
    const refused = async (input: Parameters<typeof t.app.webhooks.createEndpoint>[1], field: string) => {
      await assert.rejects(t.app.webhooks.createEndpoint(p.projectId, input), (error: Error) => {
        const fields = (error as { fields?: { field: string }[] }).fields ?? [];
        assert.ok(
          fields.some((f) => f.field.startsWith(field)),
          `${JSON.stringify(input)} → ${error.message}`,
        );
        return true;
      });
    };
    await refused({ url: 'ftp://example.com/hook' }, 'url');
    await refused({ url: 'not a url' }, 'url');
    await refused({ url: 'https://user:pass@example.com/hook' }, 'url');
    await refused({ url: 'https://example.com/hook', events: [] }, 'events');
    await refused({ url: 'https://example.com/hook', events: ['job.exploded' as never] }, 'events');
    await assert.rejects(
      t.app.webhooks.createEndpoint('prj_01hzzzzzzzzzzzzzzzzzzzzzzz', { url: 'https://example.com/' }),
      { code: 'project-not-found' },
    );
  });

  test('without DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE, private destinations are refused when saved', async () => {
    const guarded = createWebhookService({
      store: t.app.store,
      secretBox: () => ({ seal: (s: string) => s, open: (s: string) => s }) as never,
      allowPrivate: false,
    });
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://docs.localhost/hook',
      'http://[::1]/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/hook',
    ]) {
      await assert.rejects(guarded.createEndpoint(p.projectId, { url }), (error: Error) => {
        assert.match(error.message, /DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1/, url);
        return true;
      });
    }
    const accepted = await guarded.createEndpoint(p.projectId, {
      url: 'https://hooks.example.com/docwright',
    });
    assert.equal(accepted.url, 'https://hooks.example.com/docwright');
  });

  test('job changes write a message, and a delivery per subscribed endpoint, with the change', async () => {
    const all = await t.app.webhooks.createEndpoint(p.projectId, { url: `${receiver.url}/default` });
    const createdOnly = await t.app.webhooks.createEndpoint(p.projectId, {
      url: `${receiver.url}/created`,
      events: ['job.created'],
    });
    const disabled = await t.app.webhooks.createEndpoint(p.projectId, {
      url: `${receiver.url}/off`,
      events: ['job.created', 'job.completed'],
    });
    await t.app.webhooks.disableEndpoint(disabled.id);

    const jobId = await createJob();
    let rows = await deliveries();
    assert.deepEqual(
      rows.map((d) => d.endpoint_id),
      [createdOnly.id],
      'job.created goes to the endpoint that asked for it, not to a disabled one',
    );
    const [created] = await messages();
    assert.equal(created!.type, 'job.created');
    assert.equal(created!.job_id, jobId);
    const body = JSON.parse(created!.body);
    assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
    assert.deepEqual(body.data, await t.app.jobs.get(p.projectId, jobId));

    const { finished } = await finishJob(completed);
    assert.ok(finished);
    rows = await deliveries();
    assert.equal(rows.length, 2);
    assert.equal(rows[1]!.endpoint_id, all.id);
    const done = JSON.parse((await messages())[1]!.body);
    assert.equal(done.type, 'job.completed');
    assert.equal(done.data.status, 'completed');
    assert.equal(done.data.summary, 'Done.');
    assert.equal(done.data.branch, 'docwright/x');
    assert.deepEqual(done.data, await t.app.jobs.get(p.projectId, jobId));

    await t.app.jobs.archive(p.projectId, jobId);
    await t.app.jobs.archive(p.projectId, jobId); // idempotent: no second message
    const types = (await messages()).map((m) => m.type);
    assert.deepEqual(types, ['job.created', 'job.completed', 'job.archived']);
    assert.equal(JSON.parse((await messages())[2]!.body).data.status, 'archived');
  });

  test('a run that lost its lease, and a rolled-back transaction, write no message', async () => {
    await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url, events: ['job.completed'] });
    const jobId = await createJob();
    const run = (
      await claimNextRun(t.app, {
        workerId: 'w1',
        now: t.app.now(),
        leaseMs: 60_000,
        projectConcurrency: 10,
      })
    )?.run;
    assert.ok(run);
    assert.equal(
      await finishRun(t.app, { run, workerId: 'someone-else', outcome: completed, now: clock() }),
      false,
    );
    assert.equal((await messages()).length, 0);

    await assert.rejects(
      db()
        .transaction()
        .execute(async (trx) => {
          const id = await enqueueJobMessage(trx, {
            type: 'job.completed',
            projectId: p.projectId,
            jobId,
            at: clock(),
          });
          assert.ok(id, 'written inside the transaction');
          throw new Error('the job change failed');
        }),
      /the job change failed/,
    );
    assert.equal((await messages()).length, 0);
    assert.equal((await deliveries()).length, 0);
  });

  test('runs the sweeper fails (worker lost, time limit) send job.failed', async () => {
    await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url });
    const jobId = await createJob();
    const run = await db()
      .selectFrom('job_runs')
      .select(['id', 'job_id'])
      .where('job_id', '=', jobId)
      .execute();
    const error = { code: 'worker-lost', message: 'lost' };
    assert.equal((await failRuns(db(), run, error, clock(), ['queued'])).length, 1);
    const [message] = await messages();
    assert.equal(message!.type, 'job.failed');
    assert.deepEqual(JSON.parse(message!.body).data.error, error);
  });

  test('a job change wakes the dispatcher: its message is sent without waiting for the poll', async () => {
    await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url, events: ['job.created'] });
    // The dispatcher's first claim finds nothing, and its poll is an hour away.
    startDispatcher({ pollMs: 3_600_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await createJob('heard of by its signal');
    try {
      const [request] = await receiver.waitFor(1, 5_000);
      assert.equal(JSON.parse(request!.body).type, 'job.created');
    } finally {
      // Its run leaves the queue, which the next tests claim from.
      await finishJob(completed);
    }
  });

  test('the dispatcher POSTs a Standard Webhooks message that the reference library verifies', async () => {
    const endpoint = await t.app.webhooks.createEndpoint(p.projectId, { url: `${receiver.url}/in` });
    const jobId = await createJob();
    await finishJob(completed);
    startDispatcher();
    const [request] = await receiver.waitFor(1);
    assert.equal(request!.path, '/in');
    assert.match(String(request!.headers['content-type']), /^application\/json/);
    const payload = new Webhook(endpoint.secret).verify(
      request!.body,
      request!.headers as Record<string, string>,
    );
    assert.deepEqual(payload, JSON.parse((await messages())[0]!.body));
    assert.equal((payload as { type: string }).type, 'job.completed');
    assert.equal(request!.headers['webhook-id'], (await messages())[0]!.id);
    assert.match(String(request!.headers['webhook-id']), /^msg_/);
    assert.ok(Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000) < 5);
    // A wrong secret or a changed body does not verify.
    const wrong = (await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url })).secret;
    assert.throws(() => new Webhook(wrong).verify(request!.body, request!.headers as Record<string, string>));
    assert.throws(() =>
      new Webhook(endpoint.secret).verify(
        request!.body.replace(jobId, 'job_x'),
        request!.headers as Record<string, string>,
      ),
    );

    const delivery = await waitFor(async () => {
      const [row] = await deliveries();
      return row?.status === 'succeeded' ? row : undefined;
    });
    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.last_status_code, 204);
    const history = await t.app.webhooks.getDelivery(delivery.id);
    assert.equal(history.history.length, 1);
    assert.equal(history.history[0]!.statusCode, 204);
  });

  test('a failed attempt is retried with the same webhook-id on the 5 s … 10 h schedule, then fails', async () => {
    const endpoint = await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url });
    await createJob();
    await finishJob(completed);
    receiver.answer(...Array.from({ length: MAX_ATTEMPTS }, () => ({ status: 500, body: 'boom' })));
    startDispatcher();
    const verify = (i: number) =>
      new Webhook(endpoint.secret).verify(receiver.received[i]!.body, receiver.received[i]!.headers as never);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await receiver.waitFor(attempt);
      const row = await waitFor(async () => {
        const [d] = await deliveries();
        return d?.status !== 'sending' && d?.attempts === attempt ? d : undefined;
      });
      assert.equal(row.last_status_code, 500);
      assert.equal(
        receiver.received[attempt - 1]!.headers['webhook-id'],
        receiver.received[0]!.headers['webhook-id'],
      );
      if (attempt < MAX_ATTEMPTS) {
        assert.equal(row.status, 'pending');
        // random() = 0.5 puts the jitter at zero: the schedule, counted from the answer.
        const wait = Date.parse(row.next_attempt_at!) - Date.parse(row.last_attempt_at!);
        const scheduled = RETRY_DELAYS_MS[attempt - 1]!;
        assert.ok(wait >= scheduled && wait < scheduled + 1000, `wait after attempt ${attempt}: ${wait} ms`);
        // Not a moment sooner…
        await new Promise((resolve) => setTimeout(resolve, 150));
        assert.equal(receiver.received.length, attempt, 'no retry before it is due');
        offsetMs += wait; // …and then it comes.
      } else {
        assert.equal(row.status, 'failed');
        assert.equal(row.next_attempt_at, null);
      }
    }
    // The later attempts carry test-clock timestamps hours ahead, which the library would refuse as stale.
    offsetMs = 0;
    assert.doesNotThrow(() => verify(0));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(receiver.received.length, MAX_ATTEMPTS, 'nothing after the last attempt');
    const history = await t.app.webhooks.getDelivery((await deliveries())[0]!.id);
    assert.equal(history.history.length, MAX_ATTEMPTS);
    assert.ok(history.history.every((a) => a.statusCode === 500 && a.responseBody === 'boom'));
  });

  test('jitter moves each wait by up to ±10 %; Retry-After is honoured but never shortens the schedule', async () => {
    assert.equal(
      retryDelayMs(1, undefined, () => 0),
      4_500,
    );
    assert.equal(
      retryDelayMs(1, undefined, () => 1),
      5_500,
    );
    assert.equal(
      retryDelayMs(2, undefined, () => 0.5),
      300_000,
    );
    assert.equal(
      retryDelayMs(1, 120_000, () => 0.5),
      120_000,
    );
    assert.equal(
      retryDelayMs(1, 1_000, () => 0.5),
      5_000,
    );
    assert.equal(
      retryDelayMs(1, 10 ** 12, () => 0.5),
      36_000_000,
      'a huge Retry-After is capped',
    );
    assert.equal(retryDelayMs(MAX_ATTEMPTS, undefined), undefined);

    await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url });
    await createJob();
    await finishJob(completed);
    receiver.answer({ status: 429, headers: { 'retry-after': '120' } });
    startDispatcher();
    await receiver.waitFor(1);
    const row = await waitFor(async () => {
      const [d] = await deliveries();
      return d?.status === 'pending' && d.attempts === 1 ? d : undefined;
    });
    const wait = Date.parse(row.next_attempt_at!) - Date.parse(row.last_attempt_at!);
    assert.ok(wait >= 120_000 && wait < 121_000, `${wait} ms`);
    assert.equal(row.last_error, 'HTTP 429');
  });

  test('a 410 answer disables the endpoint: its queued deliveries fail and nothing more is sent', async () => {
    const gone = await t.app.webhooks.createEndpoint(p.projectId, { url: `${receiver.url}/gone` });
    await createJob();
    await createJob();
    receiver.answer({ status: 410 });
    startDispatcher({ concurrency: 1 });
    await finishJob(completed);
    await receiver.waitFor(1);
    const endpoint = await waitFor(async () => {
      const e = await t.app.webhooks.getEndpoint(gone.id);
      return e.enabled ? undefined : e;
    });
    assert.match(endpoint.disabledReason ?? '', /410/);
    await finishJob(completed);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(receiver.received.length, 1, 'nothing goes to a disabled endpoint');
    const [first] = await deliveries();
    assert.equal(first!.status, 'failed');
    assert.equal(first!.last_status_code, 410);
    assert.equal((await deliveries()).length, 1, 'a disabled endpoint gets no new deliveries');
    await assert.rejects(t.app.webhooks.resend(first!.id), { code: 'webhook-disabled' });

    await t.app.webhooks.enableEndpoint(gone.id);
    await t.app.webhooks.resend(first!.id);
    const again = await receiver.waitFor(2);
    assert.equal(again[1]!.headers['webhook-id'], again[0]!.headers['webhook-id']);
  });

  test('redirects are not followed, and a silent receiver times out', async () => {
    await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url });
    await createJob();
    await finishJob(completed);
    receiver.answer(
      { status: 307, headers: { location: `${other.url}/elsewhere` } },
      { status: 200, hang: true },
    );
    startDispatcher({ timeoutMs: 300 });
    await receiver.waitFor(1);
    let row = await waitFor(async () => {
      const [d] = await deliveries();
      return d?.attempts === 1 && d.status === 'pending' ? d : undefined;
    });
    assert.equal(row.last_status_code, 307);
    assert.match(row.last_error ?? '', /redirects are not followed.*elsewhere/);
    assert.equal(other.received.length, 0, 'the redirect target got nothing');

    offsetMs += RETRY_DELAYS_MS[0]!;
    await receiver.waitFor(2);
    row = await waitFor(async () => {
      const [d] = await deliveries();
      return d?.attempts === 2 && d.status === 'pending' ? d : undefined;
    });
    assert.equal(row.last_status_code, null);
    assert.match(row.last_error ?? '', /no answer within/);
  });

  test('a re-send goes out again with the same webhook-id and a fresh schedule', async () => {
    await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url });
    await createJob();
    await finishJob(completed);
    startDispatcher();
    await receiver.waitFor(1);
    const delivery = await waitFor(async () => {
      const [d] = await deliveries();
      return d?.status === 'succeeded' ? d : undefined;
    });
    const page = await t.app.webhooks.listDeliveries(p.projectId);
    assert.equal(page.deliveries.length, 1);
    assert.equal(page.deliveries[0]!.eventType, 'job.completed');
    assert.equal(page.deliveries[0]!.status, 'succeeded');
    const queued = await t.app.webhooks.resend(delivery.id);
    assert.equal(queued.status, 'pending');
    assert.equal(queued.attempts, 0);
    const both = await receiver.waitFor(2);
    assert.equal(both[1]!.headers['webhook-id'], both[0]!.headers['webhook-id']);
    assert.equal(both[1]!.body, both[0]!.body, 'the same bytes');
    await waitFor(async () => (await t.app.webhooks.getDelivery(delivery.id)).history.length === 2);
  });

  test('delivery history pages newest first and filters by endpoint and status', async () => {
    const a = await t.app.webhooks.createEndpoint(p.projectId, { url: `${receiver.url}/a` });
    await t.app.webhooks.createEndpoint(p.projectId, { url: `${receiver.url}/b` });
    for (let i = 0; i < 3; i++) {
      await createJob();
      await finishJob(completed);
    }
    const first = await t.app.webhooks.listDeliveries(p.projectId, { limit: 4 });
    assert.equal(first.deliveries.length, 4);
    assert.ok(first.nextCursor);
    const rest = await t.app.webhooks.listDeliveries(p.projectId, { limit: 4, cursor: first.nextCursor! });
    assert.equal(rest.deliveries.length, 2);
    assert.equal(rest.nextCursor, null);
    const ids = [...first.deliveries, ...rest.deliveries].map((d) => d.id);
    assert.deepEqual(ids, [...ids].sort().reverse());
    const onlyA = await t.app.webhooks.listDeliveries(p.projectId, { endpointId: a.id });
    assert.equal(onlyA.deliveries.length, 3);
    assert.ok(onlyA.deliveries.every((d) => d.endpointId === a.id));
    assert.equal(
      (await t.app.webhooks.listDeliveries(p.projectId, { status: 'succeeded' })).deliveries.length,
      0,
    );
    await assert.rejects(t.app.webhooks.listDeliveries(p.projectId, { limit: 500 }), {
      code: 'invalid-request',
    });
  });

  test('claims go round the endpoints, first attempts before retries, at most two in flight per endpoint', async () => {
    const endpoint = async (name: string) =>
      (
        await t.app.webhooks.createEndpoint(p.projectId, {
          url: `${receiver.url}/${name}`,
          events: ['job.created'],
        })
      ).id;
    const [a, b, c] = [await endpoint('a'), await endpoint('b'), await endpoint('c')];
    await createJob();
    try {
      // One delivery each; `a` gets a backlog of three more.
      const [first] = await deliveries();
      for (let i = 0; i < 3; i++) {
        await db()
          .insertInto('webhook_deliveries')
          .values({ ...first!, id: newWebhookDeliveryId(), endpoint_id: a })
          .execute();
      }
      // Oldest first: a's backlog, then c's retry, then b's first attempt.
      const base = clock().getTime() - 60_000;
      const due = (ms: number) => new Date(base + ms).toISOString();
      let n = 0;
      for (const d of await deliveries()) {
        const at = d.endpoint_id === a ? due(n++) : d.endpoint_id === c ? due(5) : due(10);
        await db()
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: at, attempts: d.endpoint_id === c ? 1 : 0 })
          .where('id', '=', d.id)
          .execute();
      }
      const claim = async (limit: number) => {
        const claimed = await claimDueDeliveries(t.app.store, {
          owner: 'test-claimer',
          now: clock(),
          leaseMs: 60_000,
          limit,
          perEndpoint: 2,
        });
        return claimed.map((d) => ({ [a]: 'a', [b]: 'b', [c]: 'c' })[d.endpoint_id]).sort();
      };
      assert.deepEqual(
        await claim(2),
        ['a', 'b'],
        "a's oldest, then b: a first attempt at an endpoint with none in flight",
      );
      assert.deepEqual(await claim(10), ['a', 'c'], "a's second; the rest of a's backlog waits");
      assert.deepEqual(await claim(10), [], 'a has two in flight');
      // The read that spares SQLite's write lock on a wake-up agrees: nothing a claim would take.
      assert.equal(await anyDeliveryDue(db(), clock(), 2), false);
      assert.equal(await anyDeliveryDue(db(), clock(), 3), true);
    } finally {
      await finishJob(completed);
    }
  });

  test('endpoints that hang do not hold up another project’s delivery: claims go round the endpoints, a few each', async () => {
    // 20 endpoints of this project that never answer, with two messages each, queued first.
    receiver.answer(...Array.from({ length: 100 }, () => ({ status: 200, hang: true })));
    for (let i = 0; i < 20; i++) {
      const url = `${receiver.url}/dead/${i}`;
      await t.app.webhooks.createEndpoint(p.projectId, { url, events: ['job.created'] });
    }
    await createJob();
    await createJob();
    // One healthy endpoint of another project, whose message comes last.
    const q = await seedProject(t.app, { rateLimit: 1000 });
    try {
      const url = `${other.url}/healthy`;
      await t.app.webhooks.createEndpoint(q.projectId, { url, events: ['job.created'] });
      await t.app.jobs.create(q.projectId, { prompt: 'Document the other flag' });
      // The time limit outlasts the test: the dead endpoints hang for as long as it runs.
      startDispatcher({ timeoutMs: 600_000, slowAfterMs: 200 });

      const [healthy] = await other.waitFor(1);
      assert.equal(healthy!.path, '/healthy');
      const rows = await deliveries();
      assert.equal(rows.length, 40);
      assert.ok(
        rows.every((d) => d.status === 'pending' || d.status === 'sending'),
        'no delivery to a dead endpoint has ended: they all still hang',
      );
      const ended = await db()
        .selectFrom('webhook_attempts')
        .select('delivery_id')
        .where(
          'delivery_id',
          'in',
          rows.map((d) => d.id),
        )
        .execute();
      assert.deepEqual(ended, [], 'no attempt to a dead endpoint has finished');
      // Claimed round the endpoints: every dead endpoint's first delivery in flight was claimed
      // no later than any endpoint's second; none has more than two.
      const places = new Map<string, string[]>();
      for (const d of rows.filter((r) => r.status === 'sending'))
        places.set(d.endpoint_id, [...(places.get(d.endpoint_id) ?? []), d.updated_at].sort());
      assert.equal(places.size, 20, 'every dead endpoint has a delivery in flight');
      assert.ok(
        [...places.values()].every((times) => times.length <= 2),
        'at most two in flight per endpoint',
      );
      const lastFirst = [...places.values()]
        .map((times) => times[0]!)
        .sort()
        .at(-1)!;
      const seconds = [...places.values()].flatMap((times) => times.slice(1));
      assert.ok(
        seconds.every((at) => at >= lastFirst),
        `a second delivery was claimed at ${seconds.sort()[0]}, before an endpoint's first at ${lastFirst}`,
      );
    } finally {
      // Their runs end here, not in a later test's finishJob.
      for (let i = 0; i < 3; i++) await finishJob(completed);
      rmSync(q.repository, { recursive: true, force: true });
    }
  });

  test('stop() hands a delivery in flight back, due at once and its attempt not counted', async () => {
    await t.app.webhooks.createEndpoint(p.projectId, { url: receiver.url });
    await createJob();
    await finishJob(completed);
    receiver.answer({ status: 200, hang: true });
    const dispatcher = startDispatcher();
    await receiver.waitFor(1);
    await dispatcher.stop(50);
    const [row] = await deliveries();
    assert.equal(row!.status, 'pending');
    assert.equal(row!.attempts, 0);
    assert.equal(row!.lease_owner, null);
    assert.ok(Date.parse(row!.next_attempt_at!) <= clock().getTime());
    startDispatcher();
    await receiver.waitFor(2);
  });
});
