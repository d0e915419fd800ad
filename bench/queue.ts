/**
 * Queue benchmark: `node bench/queue.ts [--db sqlite|postgres|both] [--samples 200] [--jobs 1000]`.
 *
 * 1. Pickup latency: with an idle worker, one job at a time is created through
 *    the job service and the time from its run being queued to the runner
 *    being called is recorded (p50, p99). Baseline in the same run: the bare
 *    mechanism without docwright — insert a row, wake the waiter (in-process
 *    event on SQLite, LISTEN/NOTIFY on PostgreSQL), claim it with one UPDATE.
 *    Across processes too: the same with the worker in a process of its own (as
 *    `docwright worker` beside `serve --no-worker`), woken on SQLite by the
 *    database itself (PRAGMA data_version) and on PostgreSQL by LISTEN/NOTIFY.
 * 2. Throughput: `--jobs` no-op jobs queued over 10 projects, drained by 1
 *    and by 4 worker processes (concurrency 4 each); jobs/s from the first
 *    run started to the last run ended.
 * Target: pickup p50 < 10 ms (graphile-worker reports 4.3 ms add-to-start).
 */
import { execFileSync, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type App, openApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import type { Runner } from '../src/pipeline/runner.ts';
import { Worker } from '../src/worker/worker.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'both' },
    samples: { type: 'string', default: '200' },
    jobs: { type: 'string', default: '1000' },
    'child-worker': { type: 'boolean', default: false },
    'child-pickup': { type: 'boolean', default: false },
  },
});
const POSTGRES_URL = process.env.DOCWRIGHT_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const log = (message: string) => process.stderr.write(`${message}\n`);
const noop: Runner = async () => ({ status: 'completed', prLink: null, branch: null, summary: null });

/** A drain worker process: no-op runner until SIGTERM. */
async function childWorker() {
  const app = await openApp(loadConfig(), { logger: createLogger('warn') });
  const worker = new Worker(app, { runner: noop, concurrency: 4, pollMs: 200 });
  process.once('SIGTERM', async () => {
    await worker.stop(1_000);
    await app.close();
    process.exit(0);
  });
  worker.start();
  process.stdout.write('ready\n');
}

/** An idle worker process for the cross-process pickup: prints `started <job id> <epoch ms>` per run. */
async function childPickup() {
  const app = await openApp(loadConfig(), { logger: createLogger('warn') });
  const runner: Runner = async (job) => {
    process.stdout.write(`started ${job.id} ${performance.timeOrigin + performance.now()}\n`);
    return { status: 'completed', prLink: null, branch: null, summary: null };
  };
  const worker = new Worker(app, { runner, concurrency: 1 });
  process.once('SIGTERM', async () => {
    await worker.stop(1_000);
    await app.close();
    process.exit(0);
  });
  worker.start();
  process.stdout.write('ready\n');
}

/** Pickup latency with the worker in another process: create here → runner called there. */
async function pickupAcrossProcesses(
  app: App,
  env: Record<string, string>,
  projectId: string,
  samples: number,
): Promise<number[]> {
  const child = spawn(process.execPath, [import.meta.filename, '--child-pickup'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = new Map<string, (at: number) => void>();
  let buffered = '';
  const ready = new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line === 'ready') resolve();
        const [word, jobId, at] = line.split(' ');
        if (word === 'started') started.get(jobId!)?.(Number(at));
      }
    });
  });
  await ready;
  const latencies: number[] = [];
  try {
    for (let i = 0; i < samples + 10; i++) {
      const before = performance.timeOrigin + performance.now();
      let resolveAt!: (at: number) => void;
      const at = new Promise<number>((resolve) => {
        resolveAt = resolve;
      });
      const { job } = await app.jobs.create(projectId, { prompt: `cross ${i}` });
      started.set(job.id, resolveAt);
      const ms = (await at) - before;
      if (i >= 10) latencies.push(ms);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  return latencies.sort((a, b) => a - b);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

function environment(db: 'sqlite' | 'postgres', dataDir: string, schema: string): Record<string, string> {
  const env: Record<string, string> = {
    DOCWRIGHT_DATA_DIR: dataDir,
    DOCWRIGHT_LOG_LEVEL: 'warn',
    DOCWRIGHT_MODEL: 'openai/bench',
  };
  if (db === 'postgres')
    Object.assign(env, {
      DATABASE_URL: POSTGRES_URL,
      DOCWRIGHT_DATABASE_SCHEMA: schema,
      DOCWRIGHT_SECRET_KEY: 'bench-secret-key-123456',
    });
  return env;
}

async function seed(app: App, repo: string): Promise<string> {
  const project = await app.projects.create({ name: 'bench', repository: repo, rateLimit: 1_000_000 });
  return project.id;
}

/** Pickup latency through docwright: job service create → runner called, idle worker in this process. */
async function pickup(app: App, projectId: string, samples: number): Promise<number[]> {
  let resolveStarted: ((ms: number) => void) | undefined;
  const queuedAt = new Map<string, number>();
  const runner: Runner = async (job) => {
    resolveStarted?.(performance.now() - queuedAt.get(job.id)!);
    return { status: 'completed', prLink: null, branch: null, summary: null };
  };
  const worker = new Worker(app, { runner, concurrency: 1, pollMs: 1_000 });
  worker.start();
  const latencies: number[] = [];
  try {
    for (let i = 0; i < samples + 10; i++) {
      const started = new Promise<number>((resolve) => {
        resolveStarted = resolve;
      });
      const before = performance.now();
      const { job } = await app.jobs.create(projectId, { prompt: `job ${i}` });
      // The run is queued when the creating transaction commits, just before create returns.
      queuedAt.set(job.id, before);
      const ms = await started;
      if (i >= 10) latencies.push(ms); // the first few warm up the JIT and statement caches
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await worker.stop(1_000);
  }
  return latencies.sort((a, b) => a - b);
}

/** The bare mechanism: insert, wake, claim with one UPDATE — no docwright code. */
async function baseline(
  db: 'sqlite' | 'postgres',
  dataDir: string,
  schema: string,
  samples: number,
): Promise<number[]> {
  const latencies: number[] = [];
  if (db === 'sqlite') {
    const file = path.join(dataDir, 'baseline.db');
    const conn = new DatabaseSync(file);
    conn.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; create table q (id integer primary key, state text)',
    );
    const insert = conn.prepare("insert into q (state) values ('queued')");
    const claim = conn.prepare(
      "update q set state = 'running' where id = (select id from q where state = 'queued' order by id limit 1) returning id",
    );
    const wake = new EventEmitter();
    wake.on('queued', () => {
      claim.get();
      wake.emit('claimed');
    });
    for (let i = 0; i < samples + 10; i++) {
      const before = performance.now();
      const claimed = new Promise((r) => wake.once('claimed', r));
      insert.run();
      setImmediate(() => wake.emit('queued'));
      await claimed;
      if (i >= 10) latencies.push(performance.now() - before);
    }
    conn.close();
  } else {
    const producer = new pg.Client({ connectionString: POSTGRES_URL });
    const consumer = new pg.Client({ connectionString: POSTGRES_URL });
    await Promise.all([producer.connect(), consumer.connect()]);
    await producer.query(`create table ${schema}.q (id bigserial primary key, state text)`);
    await consumer.query(`listen ${schema}_q`);
    const claimed = new EventEmitter();
    consumer.on('notification', async () => {
      await consumer.query(
        `update ${schema}.q set state = 'running' where id = (select id from ${schema}.q where state = 'queued' order by id limit 1 for update skip locked) returning id`,
      );
      claimed.emit('claimed');
    });
    for (let i = 0; i < samples + 10; i++) {
      const before = performance.now();
      const done = new Promise((r) => claimed.once('claimed', r));
      await producer.query('begin');
      await producer.query(`insert into ${schema}.q (state) values ('queued')`);
      await producer.query(`select pg_notify('${schema}_q', '')`);
      await producer.query('commit');
      await done;
      if (i >= 10) latencies.push(performance.now() - before);
    }
    await Promise.all([producer.end(), consumer.end()]);
  }
  return latencies.sort((a, b) => a - b);
}

/**
 * Queues `jobs` no-op jobs over the projects, then starts `workers` drain
 * processes; jobs/s is measured by the database clock, from the first run
 * started to the last run ended (process start-up is not counted).
 */
async function drain(
  app: App,
  env: Record<string, string>,
  projectIds: string[],
  jobs: number,
  workers: number,
): Promise<number> {
  const first = new Date().toISOString();
  for (let i = 0; i < jobs; i++)
    await app.jobs.create(projectIds[i % projectIds.length]!, { prompt: `bulk ${i}` });
  const children = Array.from({ length: workers }, () =>
    spawn(process.execPath, [import.meta.filename, '--child-worker'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  for (;;) {
    const row = await app.store.db
      .selectFrom('job_runs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirstOrThrow();
    if (Number(row.n) === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.all(
    children.map((c) => {
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGTERM');
      return exited;
    }),
  );
  const span = await app.store.db
    .selectFrom('job_runs')
    .select((eb) => [eb.fn.min('started_at').as('from'), eb.fn.max('ended_at').as('to')])
    .where('created_at', '>=', first)
    .executeTakeFirstOrThrow();
  return jobs / ((Date.parse(span.to!) - Date.parse(span.from!)) / 1000);
}

async function benchmark(db: 'sqlite' | 'postgres') {
  const samples = Number(args.samples);
  const jobs = Number(args.jobs);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-queue-'));
  const schema = `bench_${process.pid}`;
  const repo = mkdtempSync(path.join(tmpdir(), 'docwright-bench-repo-'));
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', [
    '-C',
    repo,
    '-c',
    'user.name=b',
    '-c',
    'user.email=b@b',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'init',
  ]);
  const env = environment(db, dataDir, schema);
  const app = await openApp(loadConfig({ ...process.env, ...env }), { logger: createLogger('warn') });
  try {
    const projectIds = await Promise.all(Array.from({ length: 10 }, () => seed(app, repo)));
    const projectId = projectIds[0]!;
    log(`[${db}] pickup latency, ${samples} samples…`);
    const ours = await pickup(app, projectId, samples);
    const bare = await baseline(db, dataDir, schema, samples);
    log(`[${db}] pickup latency across processes, ${samples} samples…`);
    const across = await pickupAcrossProcesses(app, env, projectId, samples);
    log(`[${db}] throughput, ${jobs} jobs over 10 projects with 1 and 4 worker processes…`);
    const one = await drain(app, env, projectIds, jobs, 1);
    const four = await drain(app, env, projectIds, jobs, 4);
    return { db, ours, bare, across, one, four };
  } finally {
    await app.close();
    if (db === 'postgres') {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(repo, { recursive: true, force: true });
  }
}

async function main() {
  const dbs = args.db === 'both' ? (['sqlite', 'postgres'] as const) : [args.db as 'sqlite' | 'postgres'];
  const results = [];
  for (const db of dbs) results.push(await benchmark(db));
  console.log(`\ndocwright queue benchmark — node ${process.version}, ${availableParallelism()} CPUs\n`);
  console.log(
    'db        pickup p50  pickup p99  bare p50   bare p99   ratio p50  2-proc p50  2-proc p99  1 worker   4 workers',
  );
  for (const r of results) {
    const row = [
      r.db.padEnd(8),
      fmt(percentile(r.ours, 50)).padStart(10),
      fmt(percentile(r.ours, 99)).padStart(10),
      fmt(percentile(r.bare, 50)).padStart(9),
      fmt(percentile(r.bare, 99)).padStart(9),
      `${(percentile(r.ours, 50) / percentile(r.bare, 50)).toFixed(1)}×`.padStart(9),
      fmt(percentile(r.across, 50)).padStart(10),
      fmt(percentile(r.across, 99)).padStart(10),
      `${r.one.toFixed(0)} jobs/s`.padStart(10),
      `${r.four.toFixed(0)} jobs/s`.padStart(10),
    ];
    console.log(row.join('  '));
  }
  for (const r of results) {
    const p50 = percentile(r.ours, 50);
    console.log(`${r.db}: pickup p50 ${fmt(p50)} — target < 10 ms: ${p50 < 10 ? 'met' : 'MISSED'}`);
    const across = percentile(r.across, 99);
    console.log(
      `${r.db}: pickup across processes p99 ${fmt(across)} — docs/worker.mdx 100 ms: ${across < 100 ? 'met' : 'MISSED'}`,
    );
  }
}

if (args['child-worker']) await childWorker();
else if (args['child-pickup']) await childPickup();
else await main();
