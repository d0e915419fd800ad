/**
 * Abuse benchmark: `node bench/abuse.ts [--db sqlite|postgres] [--only glob,regex,…]`.
 *
 * Replays the attacks of issue 9 against a real `docwright serve` on a throw-away database,
 * with the scripted OpenAI-compatible model double playing the hostile model, and prints for
 * each — beside an idle baseline measured the same way — the latency of `/healthz` (sampled
 * every 20 ms: a blocked event loop shows there first) and the resident memory of the server
 * process alone and with its run processes. Targets: `/healthz` p99 < 50 ms and RSS < 500 MB
 * under every attack.
 *
 *   idle      nothing running (the baseline)
 *   glob      list_files {"glob":"**\/*(a*)*(a*)*(a*)c"} over a file "a"×26 + "x.txt"
 *   regex     one turn of 15 × search {"pattern":"^(a+)+$"} on a file of 30,000 "a" and "!"
 *   flood     one turn of 20,000 write_file calls
 *   replace   edit_file replace_all growing a 400 KB file to 800 MB
 *   streams   100 event-stream clients that never read, on a job with 50 MB of events
 *   lock      (SQLite) another process holds the write lock for 5 s while creates arrive
 *   failover  (PostgreSQL) the server's backends terminated every 40 ms while 8 jobs run
 *   signin    (with the dashboard) 32 sign-ins with wrong passwords at once
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { type App, openApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { appendEvents } from '../src/jobs/events.ts';
import { createLogger } from '../src/logger.ts';
import {
  type RecordedRequest,
  type ScriptedServer,
  startOpenAIServer,
  toolCall,
  toolCalls,
} from '../test/doubles/openai-server.ts';
import { CuttableProxy, proxiedUrl, terminateBackends } from '../test/helpers/postgres-proxy.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    only: { type: 'string' },
  },
});
if (args.db !== 'sqlite' && args.db !== 'postgres') throw new Error('--db must be sqlite or postgres');
const POSTGRES_URL = process.env.DOCWRIGHT_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BIN = path.resolve(import.meta.dirname, '../bin/docwright.js');

const work = mkdtempSync(path.join(tmpdir(), 'docwright-abuse-'));
const schema = `bench_abuse_${randomBytes(4).toString('hex')}`;
const env: Record<string, string> = {
  DOCWRIGHT_DATA_DIR: path.join(work, 'data'),
  DOCWRIGHT_LOG_LEVEL: 'info',
  DOCWRIGHT_RATE_LIMIT: '100000',
  TMPDIR: work,
  ...(args.db === 'postgres'
    ? {
        DATABASE_URL: POSTGRES_URL,
        DOCWRIGHT_DATABASE_SCHEMA: schema,
        DOCWRIGHT_SECRET_KEY: randomBytes(24).toString('base64url'),
      }
    : {}),
};

// ---------------------------------------------------------------------------------------------
// Measuring

interface Figures {
  samples: number;
  p50: number;
  p99: number;
  max: number;
  serverRss: number;
  totalRss: number;
}

const rssOf = (pid: number): number => {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
};

const descendants = (pid: number): number[] => {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
};

/** Samples /healthz every 20 ms and the memory every 100 ms while `attack` runs. */
async function measure(url: string, pid: number, attack: () => Promise<unknown>): Promise<Figures> {
  const latencies: number[] = [];
  let serverRss = 0;
  let totalRss = 0;
  let done = false;
  const health = (async () => {
    while (!done) {
      const started = performance.now();
      try {
        await (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(120_000) })).arrayBuffer();
      } catch {}
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const memory = setInterval(() => {
    const own = rssOf(pid);
    serverRss = Math.max(serverRss, own);
    totalRss = Math.max(totalRss, own + descendants(pid).reduce((sum, child) => sum + rssOf(child), 0));
  }, 100);
  try {
    await attack();
  } finally {
    done = true;
    await health;
    clearInterval(memory);
  }
  const sorted = latencies.sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    samples: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.at(-1) ?? 0,
    serverRss,
    totalRss,
  };
}

// ---------------------------------------------------------------------------------------------
// The server, the model, the projects

interface Server {
  url: string;
  child: ChildProcess;
}

async function startServer(): Promise<Server> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
  // Keep draining its log so that a full pipe never stalls it.
  child.stdout!.resume();
  child.stderr!.resume();
  return { url, child };
}

function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('DOCWRIGHT_') && name !== 'DATABASE_URL'),
  );
}

function gitRepository(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(work, 'repo-'));
  const git = (...argv: string[]) => execFileSync('git', argv, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  git('add', '-A');
  git('-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', 'init');
  return dir;
}

async function waitForEnd(
  app: App,
  projectId: string,
  ids: string[],
  timeoutMs = 180_000,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const jobs = await Promise.all(ids.map((id) => app.jobs.get(projectId, id)));
    if (jobs.every((j) => j.status !== 'active') || Date.now() > deadline) {
      return jobs.map((j) => (j.status === 'failed' ? `failed ${j.error?.code}` : j.status));
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ---------------------------------------------------------------------------------------------
// The attacks

interface Context {
  app: App;
  /** PostgreSQL: the proxy the server's connections go through (to terminate exactly those). */
  proxy: CuttableProxy | undefined;
  server: Server;
  model: ScriptedServer;
  /** A project whose model is the double, on a repository holding `files`. */
  project(files?: Record<string, string>): Promise<{ id: string; key: string }>;
}

type Attack = (ctx: Context) => Promise<string>;

/** Runs one job whose model plays `steps`; returns how it ended. */
async function scriptedJob(
  ctx: Context,
  files: Record<string, string>,
  steps: Parameters<ScriptedServer['push']>,
) {
  const project = await ctx.project(files);
  ctx.model.push(...steps);
  const { job } = await ctx.app.jobs.create(project.id, { prompt: 'Attack' });
  const id = job.id;
  return (await waitForEnd(ctx.app, project.id, [id])).join(', ');
}

const finish = toolCall('finish', { title: 'Done', summary: 'Done.' });

const attacks: Record<string, Attack> = {
  idle: async () => {
    await new Promise((r) => setTimeout(r, 3_000));
    return '—';
  },
  glob: (ctx) =>
    scriptedJob(ctx, { [`${'a'.repeat(26)}x.txt`]: 'x\n' }, [
      toolCall('list_files', { glob: '**/*(a*)*(a*)*(a*)c' }),
      finish,
    ]),
  regex: (ctx) =>
    scriptedJob(ctx, { 'crafted.md': `${'a'.repeat(30_000)}!\n` }, [
      toolCalls(...Array.from({ length: 15 }, () => ({ name: 'search', input: { pattern: '^(a+)+$' } }))),
      finish,
    ]),
  flood: (ctx) =>
    scriptedJob(ctx, {}, [
      toolCalls(
        ...Array.from({ length: 20_000 }, (_, i) => ({
          name: 'write_file',
          input: { path: `p${i}.md`, content: 'x\n' },
        })),
      ),
      finish,
    ]),
  replace: (ctx) =>
    scriptedJob(ctx, { 'big.md': 'a'.repeat(400_000) }, [
      toolCall('read_file', { path: 'big.md', limit: 1 }),
      toolCall('edit_file', {
        path: 'big.md',
        old_string: 'a',
        new_string: 'b'.repeat(2_000),
        replace_all: true,
      }),
      finish,
    ]),
  streams: async (ctx) => {
    const project = await ctx.project();
    const { job } = await ctx.app.jobs.create(project.id, { prompt: 'Many events' });
    const jobId = job.id;
    ctx.model.push((_request: RecordedRequest) => toolCall('finish', { title: 'x', summary: 'x' }));
    const chunk = 'x'.repeat(10 * 1024);
    for (let i = 0; i < 20; i++) {
      await appendEvents(
        ctx.app.store.db,
        Array.from({ length: 250 }, () => ({ jobId, type: 'agent.text', data: { text: chunk } })),
        new Date(),
      );
    }
    const keys = await Promise.all(Array.from({ length: 10 }, () => ctx.app.keys.create(project.id)));
    const url = new URL(ctx.server.url);
    const sockets: Socket[] = [];
    for (let i = 0; i < 100; i++) {
      const socket = connect(Number(url.port), url.hostname);
      socket.on('error', () => {});
      socket.write(
        `GET /v2/agent/${project.id}/job/${jobId}/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${keys[i % 10]!.key}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      socket.pause();
      sockets.push(socket);
    }
    await new Promise((r) => setTimeout(r, 10_000));
    for (const socket of sockets) socket.destroy();
    await new Promise((r) => setTimeout(r, 2_000));
    return `100 readers, ${50} MB of events`;
  },
  lock: async (ctx) => {
    if (args.db !== 'sqlite') return 'skipped (SQLite only)';
    const project = await ctx.project();
    const other = new DatabaseSync(path.join(env.DOCWRIGHT_DATA_DIR!, 'docwright.db'));
    other.exec('BEGIN IMMEDIATE');
    const release = setTimeout(() => other.exec('COMMIT'), 5_000);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${ctx.server.url}/v2/agent/${project.id}/job`, {
          method: 'POST',
          headers: { authorization: `Bearer ${project.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: 'While locked' }),
        }).then((r) => r.status),
      ),
    );
    clearTimeout(release);
    other.close();
    return `creates: ${[...new Set(statuses)].join('/')}`;
  },
  failover: async (ctx) => {
    if (args.db !== 'postgres') return 'skipped (PostgreSQL only)';
    const project = await ctx.project();
    const respond = (request: RecordedRequest) => {
      const messages = request.body.messages as { role: string }[];
      return messages.some((m) => m.role === 'tool')
        ? finish
        : toolCall('write_file', { path: `p${randomBytes(3).toString('hex')}.md`, content: 'x\n' });
    };
    ctx.model.push(...Array.from({ length: 200 }, () => respond));
    const ids: string[] = [];
    for (let i = 0; i < 8; i++)
      ids.push((await ctx.app.jobs.create(project.id, { prompt: `Job ${i}` })).job.id);
    let stop = false;
    let terminated = 0;
    // Only the server's backends: it reaches PostgreSQL through the proxy, this process does not.
    const terminator = (async () => {
      while (!stop) {
        terminated += await terminateBackends(ctx.proxy!);
        await new Promise((r) => setTimeout(r, 40));
      }
    })();
    const outcomes = await waitForEnd(ctx.app, project.id, ids);
    stop = true;
    await terminator;
    return `${terminated} backends terminated; jobs: ${[...new Set(outcomes)].join(', ')}; server ${ctx.server.child.exitCode === null ? 'alive' : 'exited'}`;
  },
  signin: async (ctx) => {
    const probe = await fetch(`${ctx.server.url}/login`);
    if (probe.status === 404) return 'skipped (no dashboard)';
    const statuses = await Promise.all(
      Array.from({ length: 32 }, (_, i) =>
        fetch(`${ctx.server.url}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ctx.server.url },
          body: `email=user${i}%40example.com&password=wrong-password-${i}`,
          redirect: 'manual',
        }).then((r) => r.status),
      ),
    );
    return `answers: ${[...new Set(statuses)].join('/')}`;
  },
};

// ---------------------------------------------------------------------------------------------

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
const ms = (value: number) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;

async function main() {
  const only = args.only?.split(',');
  const selected = Object.keys(attacks).filter((name) => name === 'idle' || !only || only.includes(name));
  const app = await openApp(loadConfig({ ...env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  const model = await startOpenAIServer();
  let proxy: CuttableProxy | undefined;
  if (args.db === 'postgres') {
    proxy = new CuttableProxy();
    await proxy.open();
    env.DATABASE_URL = proxiedUrl(proxy);
  }
  const server = await startServer();
  const ctx: Context = {
    app,
    proxy,
    server,
    model,
    async project(files = {}) {
      const repository = gitRepository({ 'index.md': '# Home\n', ...files });
      const project = await app.projects.create({
        name: 'Abuse',
        repository,
        ref: 'main',
        model: 'openai-compatible/scripted',
        openaiCompatibleBaseUrl: model.url,
        writable: ['**/*.md'],
      });
      return { id: project.id, key: (await app.keys.create(project.id)).key };
    },
  };
  console.log(`abuse benchmark on ${args.db}: /healthz every 20 ms, memory every 100 ms\n`);
  const rows: string[][] = [];
  try {
    for (const name of selected) {
      let outcome = '';
      const figures = await measure(server.url, server.child.pid!, async () => {
        outcome = await attacks[name]!(ctx);
      });
      const row = [
        name,
        String(figures.samples),
        ms(figures.p50),
        ms(figures.p99),
        ms(figures.max),
        mb(figures.serverRss),
        mb(figures.totalRss),
        outcome,
      ];
      rows.push(row);
      console.log(row.join(' | '));
    }
  } finally {
    server.child.kill('SIGKILL');
    await model.close();
    if (args.db === 'postgres')
      await app.store.db.schema
        .dropSchema(schema)
        .ifExists()
        .cascade()
        .execute()
        .catch(() => {});
    await app.close();
    await proxy?.cut();
    rmSync(work, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
  console.log(
    '\n| attack | /healthz samples | p50 | p99 | max | server RSS | with run processes | outcome |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  console.log('\nTargets: /healthz p99 < 50 ms and RSS < 500 MB under every attack.');
}

await main();
