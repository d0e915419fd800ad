/**
 * Inbound webhook benchmark: `node bench/hooks.ts [--db sqlite|postgres] [--deliveries 50] [--rounds 5]`.
 *
 * docs/automations.mdx: a valid event is stored durably and answered 202 within 100 ms. Sends rounds of 50
 * concurrent signed GitHub `pull_request` (merged) deliveries, each a different merge, to
 * `POST /hooks/{projectId}/docs` over real HTTP on loopback, and prints the time to 202 (p50,
 * p99, max) — first against a bare node:http server that answers 202 after reading the body
 * (what this machine's loopback and client cost), then with nothing else running (the worker
 * idle), then with the worker busy: 4 runs
 * at once, each with an agent process computing a fifth of the time while the worker writes its transcript, and the
 * automation loop turning the stored deliveries into runs and jobs (once a burst ends, or 2 s into a longer one).
 * Target: p99 < 100 ms on the embedded default (SQLite) with the worker busy.
 */
import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker as Thread, workerData } from 'node:worker_threads';
import pg from 'pg';
import { type App, openApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import type { Runner } from '../src/pipeline/runner.ts';
import { buildServer } from '../src/server.ts';
import { AutomationLoop } from '../src/worker/automation-loop.ts';
import { Worker } from '../src/worker/worker.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    deliveries: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '5' },
  },
});
if (args.db !== 'sqlite' && args.db !== 'postgres') throw new Error('--db must be sqlite or postgres');
const CONCURRENT = Number(args.deliveries);
const ROUNDS = Number(args.rounds);
const POSTGRES_URL = process.env.DOCWRIGHT_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECRET = 'whsec-bench-0123456789abcdef';

const work = isMainThread ? mkdtempSync(path.join(tmpdir(), 'docwright-hooks-bench-')) : '';
const schema = `bench_hooks_${randomBytes(4).toString('hex')}`;
const env = {
  DOCWRIGHT_DATA_DIR: work,
  DOCWRIGHT_LOG_LEVEL: 'silent',
  DOCWRIGHT_RATE_LIMIT: '1000000',
  ...(args.db === 'postgres' && {
    DATABASE_URL: POSTGRES_URL,
    DOCWRIGHT_DATABASE_SCHEMA: schema,
    DOCWRIGHT_SECRET_KEY: 'bench-secret-key-0123456789',
  }),
};

const sample = JSON.parse(
  readFileSync(
    path.resolve(import.meta.dirname, '../test/automations/payloads/github-pull-request-merged.json'),
    'utf8',
  ),
);
let merge = 1_000;
/** A delivery of a merge no delivery before it named. */
function delivery(): { body: string; headers: Record<string, string> } {
  merge++;
  const payload = structuredClone(sample);
  payload.number = merge;
  payload.pull_request.number = merge;
  payload.pull_request.merge_commit_sha = merge.toString(16).padStart(40, 'a');
  payload.pull_request.head.sha = merge.toString(16).padStart(40, 'b');
  // Merged now, after the automation: a merge older than an automation never runs it.
  payload.pull_request.merged_at = new Date().toISOString();
  const body = JSON.stringify(payload);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': randomBytes(16).toString('hex'),
      'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    },
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** The client's side, on a thread of its own: the server's event loop serves only the server. */
async function sendRounds(url: string): Promise<number[]> {
  const times: number[] = [];
  // Round 0 warms the thread's HTTP client up and is not counted.
  for (let round = -1; round < ROUNDS; round++) {
    const batch = Array.from({ length: CONCURRENT }, delivery);
    await Promise.all(
      batch.map(async ({ body, headers }) => {
        const started = performance.now();
        const res = await fetch(url, { method: 'POST', headers, body });
        await res.arrayBuffer();
        if (res.status !== 202) throw new Error(`expected 202, got ${res.status}`);
        if (round >= 0) times.push(performance.now() - started);
      }),
    );
  }
  return times.sort((a, b) => a - b);
}

function measure(url: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const client = new Thread(new URL(import.meta.url), {
      workerData: { url, merge },
      argv: process.argv.slice(2),
    });
    merge += (ROUNDS + 1) * CONCURRENT;
    client.once('message', resolve);
    client.once('error', reject);
  });
}

if (!isMainThread) {
  merge = (workerData as { merge: number }).merge;
  parentPort!.postMessage(await sendRounds((workerData as { url: string }).url));
}

/**
 * A run that keeps the worker busy as a real one does: its agent works in a process of its own
 * (here one that computes a fifth of the time, as an agent waiting on its model does) while the worker writes its transcript events, until it is stopped
 * or 60 s pass.
 */
const busyRunner: Runner = async (_job, _run, { signal, emit }) => {
  // An agent mostly waits for the model: it computes 2 ms of every 10.
  const agent = spawn(
    process.execPath,
    ['-e', 'setInterval(() => { const end = performance.now() + 2; while (performance.now() < end); }, 10)'],
    { stdio: 'ignore' },
  );
  try {
    const until = Date.now() + 60_000;
    let step = 0;
    while (!signal.aborted && Date.now() < until) {
      await emit('agent.text', { text: `step ${++step}` });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    agent.kill('SIGKILL');
  }
  return { status: 'completed', prLink: null, branch: null, summary: 'bench' };
};

let app: App | undefined;
if (isMainThread)
  try {
    app = await openApp(loadConfig(env), {
      logger: createLogger('silent'),
      contexts: { accessFor: async () => [], webhookSecretFor: async () => SECRET },
    });
    const project = await app.projects.create({
      name: 'Bench',
      repository: 'https://github.com/acme/api',
      token: 'tok-bench-0123456789',
      ref: 'main',
      model: 'openai/gpt-bench',
    });
    await app.automations.create(project.id, {
      name: 'Update docs',
      trigger: { type: 'code-change', repositories: ['docs'] },
      instruction: 'Update the docs.',
    });
    const server = buildServer(app);
    const address = await server.listen({ port: 0, host: '127.0.0.1' });
    const url = `${address}/hooks/${project.id}/docs`;
    const bare = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(202, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}/`;
    await measure(bareUrl); // warm-up
    const floor = await measure(bareUrl);
    await new Promise((resolve) => bare.close(resolve));

    await measure(url); // warm-up
    const baseline = await measure(url);
    const loop = new AutomationLoop(app, { pollSeconds: 0, checkMs: 1_000 });
    const worker = new Worker(app, { runner: busyRunner, concurrency: 4, pollMs: 50 });
    for (let i = 0; i < 4; i++) await app.jobs.create(project.id, { prompt: `Busy ${i}` });
    worker.start();
    loop.start();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const busy = await measure(url);
    await loop.idle();
    const runs = await app.store.db
      .selectFrom('automation_runs')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    await loop.stop();
    await worker.stop(0);
    await server.close();

    const row = (name: string, t: number[]) =>
      `${name.padEnd(34)} ${percentile(t, 50).toFixed(1).padStart(7)} ${percentile(t, 99).toFixed(1).padStart(7)} ${t.at(-1)!.toFixed(1).padStart(7)}`;
    console.log(
      `docwright hooks bench (${args.db}): ${ROUNDS} rounds of ${CONCURRENT} concurrent signed deliveries`,
    );
    console.log(
      `${'time to 202 (ms)'.padEnd(34)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)}`,
    );
    console.log(row('bare node:http, 202 after the body', floor));
    console.log(row('docwright, worker idle', baseline));
    console.log(row('docwright, worker busy + processing', busy));
    console.log(`runs created from the deliveries: ${Number(runs.n)}; target p99 < 100 ms`);
    process.exitCode = percentile(busy, 99) < 100 ? 0 : 1;
  } finally {
    await app?.close();
    rmSync(work, { recursive: true, force: true });
    if (args.db === 'postgres') {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
  }
