// Webhooks through real processes (docs/webhooks.mdx): endpoints made with the CLI, jobs run by a
// `docwright serve` process on the scripted model, deliveries POSTed over loopback HTTP to a
// receiver that verifies them with the `standardwebhooks` reference library — plus the egress
// guard in a process without the override, and at-least-once across a SIGKILLed worker.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { claimNextRun } from '../../src/jobs/queue/claim.ts';
import { finishRun } from '../../src/jobs/queue/finish.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../doubles/webhook-receiver.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { runCli, type ServerProcess, startServerProcess, startWorkerCommand } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const ALLOW_PRIVATE = { DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE: '1' };

/** `docwright <args> --json` that must succeed. */
async function cliJson<T>(args: string[], env: Record<string, string>): Promise<T> {
  const result = await runCli([...args, '--json'], env);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as T;
}

interface Payload {
  type: string;
  timestamp: string;
  data: { id: string; status: string; summary: string | null };
}

/** Ends a job's queued run in the test process, as a worker would (the message is written with it). */
async function finishQueuedRun(t: TestApp): Promise<void> {
  const run = (
    await claimNextRun(t.app, {
      workerId: 'test',
      now: new Date(),
      leaseMs: 60_000,
      projectConcurrency: 10,
    })
  )?.run;
  assert.ok(run);
  const outcome = { status: 'completed' as const, prLink: null, branch: null, summary: 'Done.' };
  assert.ok(await finishRun(t.app, { run, workerId: 'test', outcome, now: new Date() }));
}

describe('webhooks from a docwright serve process', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let receiver: WebhookReceiver;
  let server: ServerProcess;
  let repo: string;
  let projectId: string;
  let key: string;

  before(async () => {
    [t, model, receiver] = await Promise.all([startTestApp(), startOpenAIServer(), startWebhookReceiver()]);
    repo = createGitRepository();
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: repo,
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    projectId = project.id;
    key = (await t.app.keys.create(projectId)).key;
    server = await startServerProcess({
      ...t.database.env,
      ...ALLOW_PRIVATE,
      DOCWRIGHT_MODEL: 'openai-compatible/scripted',
    });
  });
  after(async () => {
    await server?.stop();
    await Promise.all([t?.close(), model?.close(), receiver?.close()]);
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}/v2/agent/${projectId}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    assert.ok(response.ok, `${method} ${path}: ${response.status}`);
    return (await response.json()) as { id: string; status: string };
  };

  test('a failed delivery is retried with the same webhook-id; every request verifies; history and re-send from the CLI', async () => {
    const env = { ...t.database.env, ...ALLOW_PRIVATE };
    const endpoint = await cliJson<{ id: string; secret: string; events: string[] }>(
      [
        'webhook',
        'create',
        '--project',
        projectId,
        '--url',
        `${receiver.url}/docwright`,
        '--events',
        'job.created,job.completed',
      ],
      env,
    );
    assert.match(endpoint.secret, /^whsec_/);
    assert.deepEqual(endpoint.events, ['job.created', 'job.completed']);
    const listed = await cliJson<{ endpoints: object[] }>(['webhook', 'list', '--project', projectId], env);
    assert.equal(listed.endpoints.length, 1);
    assert.ok(!JSON.stringify(listed).includes(endpoint.secret), 'the secret is shown once only');

    receiver.answer({ status: 500, body: 'not now' });
    model.push(toolCall('finish', { title: 'Nothing to change', summary: 'The docs are current.' }));
    const job = await api('POST', '/job', { prompt: 'Check the docs' });

    // job.created (refused), job.completed, then job.created again about 5 s later.
    const requests = await receiver.waitFor(3, 30_000);
    const webhook = new Webhook(endpoint.secret);
    const payloads = requests.map(
      (r) => webhook.verify(r.body, r.headers as Record<string, string>) as Payload,
    );
    const created = requests.filter((_, i) => payloads[i]!.type === 'job.created');
    assert.equal(created.length, 2);
    assert.equal(
      created[0]!.headers['webhook-id'],
      created[1]!.headers['webhook-id'],
      'one message, two attempts',
    );
    assert.equal(created[0]!.body, created[1]!.body);
    const gap = created[1]!.receivedAt - created[0]!.receivedAt;
    assert.ok(gap >= 4_400 && gap < 12_000, `retried after ${gap} ms (5 s ± 10 %)`);
    assert.ok(
      Number(created[1]!.headers['webhook-timestamp']) > Number(created[0]!.headers['webhook-timestamp']),
    );
    const completed = payloads.find((p) => p.type === 'job.completed')!;
    assert.deepEqual(completed.data, await api('GET', `/job/${job.id}`));
    assert.equal(completed.data.summary, 'The docs are current.');

    const page = await waitFor(async () => {
      const listing = await cliJson<{
        deliveries: {
          id: string;
          eventType: string;
          status: string;
          attempts: number;
          lastStatusCode: number;
        }[];
      }>(['webhook', 'deliveries', '--project', projectId], env);
      return listing.deliveries.every((d) => d.status === 'succeeded') ? listing : undefined;
    });
    const createdDelivery = page.deliveries.find((d) => d.eventType === 'job.created')!;
    assert.equal(createdDelivery.attempts, 2);
    assert.equal(createdDelivery.lastStatusCode, 204);
    const detail = await cliJson<{ history: { statusCode: number; responseBody: string }[] }>(
      ['webhook', 'deliveries', '--delivery', createdDelivery.id],
      env,
    );
    assert.deepEqual(
      detail.history.map((a) => [a.statusCode, a.responseBody]),
      [
        [500, 'not now'],
        [204, ''],
      ],
    );

    await cliJson(['webhook', 'resend', createdDelivery.id], env);
    const again = await receiver.waitFor(4);
    assert.equal(again[3]!.headers['webhook-id'], created[0]!.headers['webhook-id']);
    assert.doesNotThrow(() => webhook.verify(again[3]!.body, again[3]!.headers as Record<string, string>));

    await cliJson(['webhook', 'delete', endpoint.id], env);
    const none = await cliJson<{ endpoints: object[] }>(['webhook', 'list', '--project', projectId], env);
    assert.deepEqual(none.endpoints, []);
  });

  test('a receiver that answers 410 disables its endpoint', async () => {
    const env = { ...t.database.env, ...ALLOW_PRIVATE };
    const endpoint = await cliJson<{ id: string }>(
      [
        'webhook',
        'create',
        '--project',
        projectId,
        '--url',
        `${receiver.url}/gone`,
        '--events',
        'job.archived',
      ],
      env,
    );
    const before = receiver.received.length;
    receiver.answer({ status: 410 });
    model.push(toolCall('finish', { title: 'Nothing', summary: 'Nothing.' }, { delayMs: 2_000 }));
    const job = await api('POST', '/job', { prompt: 'Wait a little' });
    await api('POST', `/job/${job.id}/archive`);
    await receiver.waitFor(before + 1);
    const listed = await waitFor(async () => {
      const { endpoints } = await cliJson<{
        endpoints: { id: string; enabled: boolean; disabledReason: string }[];
      }>(['webhook', 'list', '--project', projectId], env);
      const found = endpoints.find((e) => e.id === endpoint.id)!;
      return found.enabled ? undefined : found;
    });
    assert.match(listed.disabledReason, /410/);
  });
});

describe('webhook egress guard in a worker process without DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let worker: ServerProcess | undefined;
  let repo: string;
  before(async () => {
    [t, receiver] = await Promise.all([startTestApp({ env: ALLOW_PRIVATE }), startWebhookReceiver()]);
  });
  after(async () => {
    await worker?.stop();
    await Promise.all([t?.close(), receiver?.close()]);
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  test('a private-address URL is refused when saved, and at send time when it was saved with the override', async () => {
    repo = createGitRepository();
    const project = await t.app.projects.create({ name: 'Docs', repository: repo });
    const refused = await runCli(
      ['webhook', 'create', '--project', project.id, '--url', `${receiver.url}/hook`, '--json'],
      t.database.env,
    );
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /127\.0\.0\.1 is a loopback.*DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1/);

    // Saved while the override was on (this test process has it); the worker has it off.
    await t.app.webhooks.createEndpoint(project.id, { url: `${receiver.url}/hook` });
    await t.app.jobs.create(project.id, { prompt: 'Check the docs' });
    await finishQueuedRun(t);
    worker = await startWorkerCommand(t.database.env);
    const delivery = await waitFor(async () => {
      const { deliveries } = await t.app.webhooks.listDeliveries(project.id);
      return deliveries[0]?.attempts === 1 && deliveries[0].status === 'pending' ? deliveries[0] : undefined;
    });
    assert.equal(delivery.lastStatusCode, null);
    assert.match(delivery.lastError ?? '', /non-public address.*DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1/);
    assert.equal(receiver.received.length, 0, 'nothing reached the private address');
  });
});

describe('webhooks at least once across a SIGKILLed worker', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let repo: string;
  const workers: ServerProcess[] = [];
  before(async () => {
    [t, receiver] = await Promise.all([startTestApp({ env: ALLOW_PRIVATE }), startWebhookReceiver()]);
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await Promise.all([t?.close(), receiver?.close()]);
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  test('a delivery whose worker is killed mid-send is sent again, with the same webhook-id, by another worker', async () => {
    repo = createGitRepository();
    const project = await t.app.projects.create({ name: 'Docs', repository: repo });
    const endpoint = await t.app.webhooks.createEndpoint(project.id, { url: `${receiver.url}/hook` });
    await t.app.jobs.create(project.id, { prompt: 'Check the docs' });
    await finishQueuedRun(t);
    const [queued] = (await t.app.webhooks.listDeliveries(project.id)).deliveries;
    assert.equal(queued!.status, 'pending', 'enqueued with the job change, before any worker runs');

    const env = { ...t.database.env, ...ALLOW_PRIVATE, DOCWRIGHT_LEASE_SECONDS: '1' };
    receiver.answer({ status: 200, hang: true });
    const first = await startWorkerCommand(env);
    workers.push(first);
    await receiver.waitFor(1);
    await first.stop('SIGKILL');
    const held = (await t.app.webhooks.listDeliveries(project.id)).deliveries[0]!;
    assert.equal(held.status, 'sending', 'the killed worker still holds its lease');

    const second = await startWorkerCommand(env);
    workers.push(second);
    const [lost, resent] = await receiver.waitFor(2);
    assert.equal(resent!.headers['webhook-id'], lost!.headers['webhook-id']);
    const webhook = new Webhook(endpoint.secret);
    assert.equal(
      (webhook.verify(resent!.body, resent!.headers as Record<string, string>) as Payload).type,
      'job.completed',
    );
    const done = await waitFor(async () => {
      const d = (await t.app.webhooks.listDeliveries(project.id)).deliveries[0]!;
      return d.status === 'succeeded' ? d : undefined;
    });
    assert.equal(done.attempts, 2, "the killed worker's attempt counts");
    assert.equal(done.lastStatusCode, 204);
  });
});
