/**
 * API throughput benchmark: `node bench/api.ts [--db sqlite|postgres]
 * [--duration 10] [--warmup 2] [--paced-warmup 12] [--connections 50] [--projects 200] [--rounds 5]
 * [--only get,create,paced] [--rate 1000] [--profile] [--no-worker]`.
 *
 * Starts a real `docwright serve` process on a throw-away database, seeds it
 * in-process (projects with a high rate limit, one key each, a few jobs),
 * then measures with autocannon, 50 connections flat out:
 *   (a) GET  /v2/agent/{p}/job/{id}  polling existing jobs,
 *   (b) POST /v2/agent/{p}/job       creating jobs, rotating over projects,
 * against the baselines, each a process of its own (bench/baseline-server.ts):
 *   (c) bare node:http answering (a)'s body from memory, the ceiling of any server; and bare
 *       node:http doing one prepared SELECT of the job row on the same database, the ceiling
 *       of a server that reads what a poll must read;
 *   (d) bare node:http doing one INSERT (one transaction) of a job row per request;
 * and (b) and (d) once more at a steady 1,000 requests/s (open loop: `paced`, once the embedded
 * worker has run what the seeding and (b) queued). (a) and (c), (b) and (d)
 * run side by side: alternating slices of `duration / rounds` seconds, each round's ratios
 * printed, medians compared, so that a load that drifts during the run (a shared machine) weighs
 * on all alike. Prints req/s, latency percentiles, server CPU per request and non-2xx counts,
 * and compares with the targets: GET ≥ 0.8× bare + 1 SELECT (and ≥ 0.5× bare); create ≥ 0.5×
 * bare + 1 INSERT; a steady 1,000 creates/s with p99 < 25 ms (SQLite) or < 50 ms (PostgreSQL).
 * `--projects 5` puts thousands of uses in each project's rate-limit window (a project with a
 * high limit): a create must cost the same there as with 200 projects.
 * `--profile` runs the server under --cpu-prof and prints where its time went.
 * The load generator runs on the same machine: on few cores it competes
 * with the server, which the printed load average hints at.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import {
  type AutocannonRequest,
  type Figures,
  fmt,
  type Load,
  measure,
  medianOf,
  paced,
  printTable,
  topFunctions,
} from './api-measure.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    /**
     * Seconds of paced load before each paced measurement. Both servers measured at a paced
     * 1,000/s on PostgreSQL, docwright's and the bare one, stalled once for 0.2–0.4 s about
     * 10.5 s after their paced load began (8.5 s into the measurement after a 2 s warm-up, 5.5 s
     * after a 5 s one, not at all after 12 s), whichever had run before; a node:http server
     * without a database did not. A shorter warm-up measures that transient, not the steady rate.
     */
    'paced-warmup': { type: 'string', default: '12' },
    connections: { type: 'string', default: '50' },
    projects: { type: 'string', default: '200' },
    'jobs-per-project': { type: 'string', default: '5' },
    /** GET and bare alternate in this many slices of `duration / rounds` seconds (at least 2 s each). */
    rounds: { type: 'string', default: '5' },
    profile: { type: 'boolean', default: false },
    /** Creates per second of the paced run (the targets are judged at 1,000). */
    rate: { type: 'string', default: '1000' },
    /** The server runs no jobs (`serve --no-worker`, as on scale-out API nodes): the API alone. */
    'no-worker': { type: 'boolean', default: false },
    /** Comma-separated subset of get,create,paced (to profile one of them alone). */
    only: { type: 'string', default: 'get,create,paced' },
  },
});
if (args.db !== 'sqlite' && args.db !== 'postgres') throw new Error('--db must be sqlite or postgres');
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const PACED_WARMUP = Number(args['paced-warmup']);
const CONNECTIONS = Number(args.connections);
const PROJECTS = Number(args.projects);
const JOBS_PER_PROJECT = Number(args['jobs-per-project']);
const ROUNDS = Math.max(1, Number(args.rounds));
const POSTGRES_URL = process.env.DOCWRIGHT_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BIN = path.resolve(import.meta.dirname, '../bin/docwright.js');
const BASELINE_SERVER = path.resolve(import.meta.dirname, 'baseline-server.ts');
/** The steady rate of the open-loop create run. */
const CREATE_RATE = Number(args.rate);
const RATE = fmt(CREATE_RATE);

const log = (message: string) => process.stderr.write(`${message}\n`);

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function waitFor(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within 30 s:\n${output()}`);
}

function startProcess(argv: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The part of the environment that points docwright at the benchmark database. */
function databaseEnv(dataDir: string, schema: string): Record<string, string> {
  const base = { DOCWRIGHT_DATA_DIR: dataDir, DOCWRIGHT_LOG_LEVEL: 'warn' };
  if (args.db === 'sqlite') return base;
  return {
    ...base,
    DATABASE_URL: POSTGRES_URL,
    DOCWRIGHT_DATABASE_SCHEMA: schema,
    DOCWRIGHT_SECRET_KEY: randomBytes(24).toString('base64url'),
  };
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('DOCWRIGHT_') && name !== 'DATABASE_URL') env[name] = value;
  }
  return env;
}

function createGitRepository(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-repo-'));
  const git = (...argv: string[]) => execFileSync('git', argv, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'index.mdx'), '# Hello\n');
  git('add', '-A');
  git('-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', 'init');
  return dir;
}

interface Seeded {
  projectId: string;
  key: string;
  jobIds: string[];
}

/** Projects (high rate limit, so that it does not cap the create run), one key each, a few jobs. */
async function seed(env: Record<string, string>, repository: string): Promise<Seeded[]> {
  const app = await openApp(loadConfig(env), { logger: createLogger('warn') });
  try {
    const seeded: Seeded[] = [];
    for (let i = 0; i < PROJECTS; i++) {
      const project = await app.projects.create({
        name: `Bench ${i}`,
        repository,
        ref: 'main',
        model: 'anthropic/claude-bench',
        rateLimit: 1_000_000,
      });
      const { key } = await app.keys.create(project.id);
      const jobIds: string[] = [];
      for (let j = 0; j < JOBS_PER_PROJECT; j++) {
        const { job } = await app.jobs.create(project.id, { prompt: `Document feature ${j}` });
        jobIds.push(job.id);
      }
      seeded.push({ projectId: project.id, key, jobIds });
    }
    return seeded;
  } finally {
    await app.close();
  }
}

/** Same status line, headers and body shape as the GET route, without any framework or database. */
const BARE_SERVER = `
const http = require('node:http');
const body = Buffer.from(process.env.BODY);
http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-'));
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const env = databaseEnv(dataDir, schema);
  const repository = createGitRepository();
  const children: ChildProcess[] = [];
  const profileDir = path.join(dataDir, 'profile');
  const cleanup = async () => {
    for (const child of children) await stop(child);
    rmSync(repository, { recursive: true, force: true });
    if (args.db === 'postgres') {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

  try {
    log(`seeding ${PROJECTS} projects with one key and ${JOBS_PER_PROJECT} jobs each on ${args.db}…`);
    const started = Date.now();
    const seeded = await seed(env, repository);
    log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // SQLite's baselines get a copy of the seeded file: on docwright's own file they would wait
    // for the write lock of its embedded worker (and it for theirs), a cost of sharing a file
    // between processes rather than of a server. PostgreSQL's share the schema, as processes do.
    const baselineFile = path.join(dataDir, 'baseline.db');
    if (args.db === 'sqlite') {
      const source = new DatabaseSync(path.join(dataDir, 'docwright.db'));
      source.exec(`vacuum into '${baselineFile}'`);
      source.close();
    }

    const port = await freePort();
    const server = startProcess(
      [
        ...(args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
        BIN,
        'serve',
        '--port',
        String(port),
        ...(args['no-worker'] ? ['--no-worker'] : []),
      ],
      { ...cleanEnv(), ...env },
    );
    children.push(server.child);
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/readyz`, server.child, server.output);

    // One real answer of each kind: the bare server returns the same body, and a broken setup fails here, not as a column of non-2xx.
    const sample = seeded[0]!;
    const got = await fetch(`${base}/v2/agent/${sample.projectId}/job/${sample.jobIds[0]}`, {
      headers: { authorization: `Bearer ${sample.key}` },
    });
    const jobBody = await got.text();
    if (got.status !== 200) throw new Error(`GET answered ${got.status}: ${jobBody}`);
    const posted = await fetch(`${base}/v2/agent/${sample.projectId}/job`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sample.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'warm' }),
    });
    if (posted.status !== 201) throw new Error(`POST answered ${posted.status}: ${await posted.text()}`);

    // Each request picks the next project (and job) in turn, so that no project's rate limit or row is the bottleneck.
    let next = 0;
    const getJob: AutocannonRequest = {
      method: 'GET',
      setupRequest: (request) => {
        const i = next++;
        const p = seeded[i % seeded.length]!;
        const jobId = p.jobIds[Math.floor(i / seeded.length) % p.jobIds.length]!;
        return {
          ...request,
          path: `/v2/agent/${p.projectId}/job/${jobId}`,
          headers: { ...request.headers, authorization: `Bearer ${p.key}` },
        };
      },
    };
    const createJob: AutocannonRequest = {
      method: 'POST',
      body: JSON.stringify({ prompt: 'Document the new --verbose flag of the export command' }),
      setupRequest: (request) => {
        const p = seeded[next++ % seeded.length]!;
        return {
          ...request,
          path: `/v2/agent/${p.projectId}/job`,
          headers: {
            ...request.headers,
            'content-type': 'application/json',
            authorization: `Bearer ${p.key}`,
          },
        };
      },
    };

    /** Runs waiting for the embedded worker, read on a connection of the bench's own. */
    const queuedRuns = async (): Promise<number> => {
      const query = "select count(*) as queued from job_runs where status = 'queued'";
      if (args.db === 'sqlite') {
        const db = new DatabaseSync(path.join(dataDir, 'docwright.db'), { readOnly: true, timeout: 1_000 });
        try {
          return Number((db.prepare(query).get() as { queued: number }).queued);
        } finally {
          db.close();
        }
      }
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        return Number((await client.query(query.replace('job_runs', `${schema}.job_runs`))).rows[0].queued);
      } finally {
        await client.end();
      }
    };
    /** Waits (up to 5 minutes) for the worker to run every queued run; says how long that took. */
    const drainQueue = async (): Promise<string | undefined> => {
      if (args['no-worker']) return undefined;
      const backlog = await queuedRuns();
      if (backlog === 0) return undefined;
      log(`waiting for the worker to run ${fmt(backlog)} queued runs…`);
      const started = performance.now();
      let left = backlog;
      while (left > 0 && performance.now() - started < 300_000) {
        await new Promise((r) => setTimeout(r, 250));
        left = await queuedRuns();
      }
      const seconds = (performance.now() - started) / 1000;
      return `worker catch-up before the paced run: ${fmt(backlog - left)} runs in ${fmt(seconds, 1)} s (${fmt((backlog - left) / seconds)} runs/s)${left > 0 ? `, ${fmt(left)} still queued` : ''}`;
    };

    const only = new Set(args.only.split(','));
    const load: Load = { duration: DURATION, warmup: WARMUP, connections: CONNECTIONS };
    const startBaseline = async (argv: string[], extra: Record<string, string>) => {
      const baselinePort = await freePort();
      const started = startProcess(argv, { ...cleanEnv(), ...extra, PORT: String(baselinePort) });
      children.push(started.child);
      const url = `http://127.0.0.1:${baselinePort}`;
      await waitFor(`${url}/`, started.child, started.output);
      return { url, pid: started.child.pid };
    };
    const baselineEnv = {
      DB: args.db,
      DATABASE_URL: POSTGRES_URL,
      SCHEMA: schema,
      SQLITE_FILE: baselineFile,
    };
    const bare = await startBaseline(['-e', BARE_SERVER], { BODY: jobBody });
    const withSelect = await startBaseline([BASELINE_SERVER], { ...baselineEnv, BASELINE: 'select' });
    const withInsert = await startBaseline([BASELINE_SERVER], { ...baselineEnv, BASELINE: 'insert' });

    const results: Figures[] = [];
    const notes: string[] = [];
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    /** The first target's req/s over another's, per round and as the median, against a target ratio. */
    const ratioLine = (label: string, ratios: number[], target?: number) => {
      const m = median(ratios);
      const goal = target === undefined ? '' : `   target ≥ ${target.toFixed(2)}×: ${verdict(m >= target)}`;
      notes.push(
        `${label.padEnd(28)} ${m.toFixed(2)}× (median of ${ratios.length} side-by-side rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})${goal}`,
      );
    };

    interface Target {
      name: string;
      url: string;
      requests: AutocannonRequest[];
      pid: number | undefined;
    }
    /**
     * Targets measured side by side: alternating slices of `duration / rounds` seconds, in an order
     * rotated every round, so that the machine's load (shared, and drifting) weighs on all alike.
     * Returns each target's medians and, per round, the first target's req/s over each other's.
     */
    const sideBySide = async (targets: Target[]) => {
      const slice = Math.max(2, Math.round(DURATION / ROUNDS));
      const slices: Figures[][] = targets.map(() => []);
      const ratios: number[][] = targets.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (let step = 0; step < targets.length; step++) {
          const i = (step + round) % targets.length;
          const { name, url, requests, pid } = targets[i]!;
          const warmup = round === 0 ? WARMUP : 0;
          slices[i]!.push(await measure(name, url, requests, { ...load, duration: slice, warmup }, pid));
        }
        for (let i = 1; i < targets.length; i++) {
          ratios[i]!.push(slices[0]![round]!.rps / slices[i]![round]!.rps);
        }
      }
      const figures = targets.map((t, i) => medianOf(t.name, slices[i]!));
      results.push(...figures);
      return { figures, ratios };
    };

    const dbName = args.db === 'postgres' ? 'PostgreSQL' : 'SQLite';
    if (only.has('get')) {
      const { ratios } = await sideBySide([
        { name: '(a) GET job', url: base, requests: [getJob], pid: server.child.pid },
        {
          name: `(c) bare + 1 SELECT (${dbName})`,
          url: withSelect.url,
          requests: [getJob],
          pid: withSelect.pid,
        },
        {
          name: '(c) bare node:http',
          url: bare.url,
          requests: [{ method: 'GET', path: '/' }],
          pid: bare.pid,
        },
      ]);
      ratioLine('GET / bare + 1 SELECT', ratios[1]!, 0.8);
      ratioLine('GET / bare node:http', ratios[2]!, 0.5);
    }
    if (only.has('create')) {
      const { ratios } = await sideBySide([
        { name: '(b) POST job', url: base, requests: [createJob], pid: server.child.pid },
        {
          name: `(d) bare + 1 INSERT (${dbName})`,
          url: withInsert.url,
          requests: [createJob],
          pid: withInsert.pid,
        },
      ]);
      ratioLine('create / bare + 1 INSERT', ratios[1]!, 0.5);
    }
    if (only.has('paced')) {
      const nextCreate = () => {
        const p = seeded[next++ % seeded.length]!;
        return { path: `/v2/agent/${p.projectId}/job`, key: p.key, body: createJob.body! };
      };
      // The seeding and the flat-out run leave a backlog that the worker then runs at full speed:
      // the paced run measures a steady rate of creates that the worker runs as they come, not that catch-up.
      const drained = await drainQueue();
      if (drained) notes.push(drained);
      const pacedLoad: Load = { ...load, warmup: PACED_WARMUP };
      const atRate = await paced(
        `(b) POST job at ${RATE}/s`,
        base,
        CREATE_RATE,
        nextCreate,
        pacedLoad,
        server.child.pid,
      );
      const baselineAtRate = await paced(
        `(d) bare + 1 INSERT at ${RATE}/s`,
        withInsert.url,
        CREATE_RATE,
        nextCreate,
        pacedLoad,
        withInsert.pid,
      );
      if (!args['no-worker']) {
        const behind = await queuedRuns();
        notes.push(
          `queued runs after the paced run: ${fmt(behind)} (the worker ${behind > CREATE_RATE ? 'fell behind' : 'kept up'})`,
        );
      }
      results.push(atRate, baselineAtRate);
      // PostgreSQL's target allows for its round trips; SQLite's runs in the process.
      const p99Target = args.db === 'postgres' ? 50 : 25;
      const ok = atRate.rps >= 0.99 * CREATE_RATE && atRate.p99 < p99Target;
      notes.push(
        `${`create at ${RATE}/s`.padEnd(29)}${fmt(atRate.rps)}/s, p99 ${fmt(atRate.p99, 1)} ms after ${fmt(PACED_WARMUP)} s of warm-up (bare + 1 INSERT: ${fmt(baselineAtRate.p99, 1)} ms)   target ≥ 1,000/s with p99 < ${p99Target} ms: ${CREATE_RATE === 1000 ? verdict(ok) : 'not judged at this rate'}`,
      );
    }
    for (const child of children) await stop(child);

    const loadAverage = loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
    console.log(
      `\ndocwright API benchmark — ${args.db}, node ${process.version}, ${availableParallelism()} CPUs, ` +
        `load ${loadAverage}, ${CONNECTIONS} connections, ${DURATION} s each (side by side: ${ROUNDS} alternating slices, medians), ` +
        `${PROJECTS} projects, body ${jobBody.length} B, ${args['no-worker'] ? 'serve --no-worker (the API alone)' : 'serve with its embedded worker (every created job is run)'}\n`,
    );
    printTable(results);
    console.log(`\n${notes.join('\n')}`);

    if (args.profile) {
      for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
        console.log(`\nserver CPU profile (${path.join(profileDir, file)}), warm-ups included:\n`);
        console.log(topFunctions(path.join(profileDir, file), path.resolve(import.meta.dirname, '..')));
      }
    }
  } finally {
    await cleanup();
    if (!args.profile) rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
