/**
 * Pipeline benchmark: `node bench/pipeline.ts [--runs 15] [--large-runs 5] [--pages 10000]
 * [--warmup 1] [--only fixture,large] [--tmp DIR]`.
 *
 * Everything but model time: one job through the production pipeline — a Worker claiming the
 * run and calling `createAgentRunner(app)` (clone → scripted edit → validation → commit → push →
 * pull request) — on the Mintlify fixture (../shared/fixtures/mintlify-docs, when present) and on
 * a generated site of `--pages` pages. The repository is served by a real git smart-HTTP server
 * (token auth), the pull request opened on the GitHub API double, the model is the scripted
 * OpenAI-compatible double (read_file → edit_file → finish), the database a throw-away SQLite.
 * A job is timed from `jobs.create` to its `completed` status; the time spent in HTTP requests
 * to the model double is measured and subtracted ("net").
 *
 * Baseline in the same run, against the same server, interleaved with docwright's runs:
 * `git clone --depth 1 --branch main`, the same edit written to the file, `git commit`,
 * `git push origin HEAD:refs/heads/<new branch>`, with the same credentials in the environment.
 * Warm-up runs are excluded. Prints p50/p90/max of both, the ratio of the p50s, a per-phase
 * breakdown of docwright's runs (from its git processes, model requests and job events), and:
 * Targets: net p50 ≤ 1.5× bare p50 (both cases); net p50 < 2 s on the fixture.
 *
 * Checkouts go to the system's temporary directory, as in production; `--tmp DIR` puts them (and
 * the served repositories) elsewhere, e.g. `--tmp /dev/shm` to see the pipeline's own costs on a
 * machine whose disk creates files slowly (then a 10,000-page clone is mostly file creation).
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { type App, openApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { gitCredentialEnv } from '../src/git/credentials.ts';
import { createLogger } from '../src/logger.ts';
import { createAgentRunner, headBranch } from '../src/worker/agent-runner.ts';
import type { RunnableJob, Runner } from '../src/worker/runner.ts';
import { Worker } from '../src/worker/worker.ts';
import { type GitHttpServer, startGitHttpServer } from '../test/doubles/git-http-server.ts';
import { type GitHubApi, startGitHubApi } from '../test/doubles/github-api.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../test/doubles/openai-server.ts';
import { FIXTURE, generateSite } from './site.ts';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    'large-runs': { type: 'string', default: '5' },
    pages: { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '1' },
    only: { type: 'string', default: 'fixture,large' },
    tmp: { type: 'string' },
  },
});
// Where every checkout, working copy and served repository goes (os.tmpdir() reads TMPDIR).
if (args.tmp) process.env.TMPDIR = path.resolve(args.tmp);
const TOKEN = 'ghp_benchPipelineToken0123456789abcdef';
const USERNAME = 'x-access-token';
const RATIO_TARGET = 1.5;
const FIXTURE_P50_TARGET_MS = 2_000;
const log = (message: string) => process.stderr.write(`${message}\n`);
const execFileAsync = promisify(execFile);

interface Edit {
  file: string;
  oldString: string;
  newString: string;
}

interface Case {
  name: string;
  repo: string;
  /** The site's files (copied into the served repository, then removed if `temporary`). */
  dir: string;
  temporary: boolean;
  edit: Edit;
  runs: number;
  fixture: boolean;
}

// ---------------------------------------------------------------------------------------------
// Instrumentation: git processes (diagnostics channel), model requests (fetch), job events.

interface Span {
  name: string;
  start: number;
  end: number;
}

/** Spans of one docwright run, filled while it is the only thing running. */
interface Trace {
  created: number;
  runStart?: number;
  runEnd?: number;
  done?: number;
  git: Span[];
  model: Span[];
  events: Span[];
}

let tracing: Trace | null = null;
let modelUrl = '';

/** The git subcommand of a spawn's argv, past any `-c key=value` options. */
function gitCommand(argv: string[]): string | undefined {
  if (path.basename(argv[0] ?? '') !== 'git') return undefined;
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === '-c') i++;
    else if (!argv[i]!.startsWith('-')) return argv[i];
  }
  return undefined;
}

// Every git process docwright starts (the server's http-backend processes are left out).
subscribe('child_process', (message) => {
  const trace = tracing;
  if (!trace) return;
  const child = (message as { process: ChildProcess }).process;
  const start = performance.now();
  queueMicrotask(() => {
    const name = gitCommand(child.spawnargs);
    if (!name || name === 'http-backend') return;
    child.once('close', () => trace.git.push({ name, start, end: performance.now() }));
  });
});

// Requests to the model double, body included: the "model time" that is subtracted.
const originalFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const trace = tracing;
  if (!trace || !modelUrl || !url.startsWith(modelUrl)) return originalFetch(input, init);
  const start = performance.now();
  const response = await originalFetch(input, init);
  const body = await response.arrayBuffer();
  trace.model.push({ name: 'model', start, end: performance.now() });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};

/** The production runner, with its start, end and emitted events timed; tells GitHub about the branch. */
function tracedRunner(inner: Runner, onStart: (job: RunnableJob) => Promise<void>): Runner {
  return async (job, run, signal, emit, defer) => {
    const trace = tracing;
    await onStart(job);
    if (trace) trace.runStart = performance.now();
    try {
      return await inner(
        job,
        run,
        signal,
        async (type, data) => {
          const start = performance.now();
          await emit(type, data);
          trace?.events.push({ name: type, start, end: performance.now() });
        },
        defer,
      );
    } finally {
      if (trace) trace.runEnd = performance.now();
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Statistics and phases.

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const sum = (spans: Span[]) => spans.reduce((total, s) => total + (s.end - s.start), 0);
const ms = (value: number) => `${Math.round(value).toLocaleString('en-US')} ms`;

const PHASES = [
  'queue → runner',
  'runner setup',
  'clone',
  'agent setup',
  'model (double)',
  'tools + events',
  'validation',
  'commit',
  'push',
  'pull request',
  'runner end',
  'finish run',
] as const;
type Phase = (typeof PHASES)[number];

/** Splits one traced run into consecutive phases (they add up to its total). */
function phases(trace: Trace): Record<Phase, number> {
  const git = (names: string[]) => trace.git.filter((s) => names.includes(s.name));
  const event = (type: string) => trace.events.find((e) => e.name === type);
  // rev-parse runs in both: the checkout's git processes are those before the first model request.
  const firstModelStart = trace.model[0]?.start ?? Number.POSITIVE_INFINITY;
  const checkout = git(['ls-remote', 'clone', 'checkout', 'branch', 'rev-parse']).filter(
    (s) => s.end <= firstModelStart,
  );
  const commit = git([
    'read-tree',
    'update-index',
    'write-tree',
    'rev-parse',
    'commit-tree',
    'update-ref',
  ]).filter((s) => s.start >= firstModelStart);
  const push = git(['push']);
  const finishResult = trace.events.filter((e) => e.name === 'agent.tool_result').at(-1);
  const validation = event('agent.validation');
  const pushed = event('git.pushed');
  const pull = event('pull_request.ready');
  if (!checkout.length || !commit.length || !push.length || !trace.model.length)
    throw new Error(`incomplete trace: ${JSON.stringify(trace.git.map((g) => g.name))}`);
  if (!finishResult || !validation || !pushed || !pull) throw new Error('missing job events');
  const runStart = trace.runStart!;
  const cloneStart = checkout[0]!.start;
  const cloneEnd = checkout.at(-1)!.end;
  const firstModel = trace.model[0]!.start;
  const model = sum(trace.model);
  return {
    'queue → runner': runStart - trace.created,
    'runner setup': cloneStart - runStart,
    clone: cloneEnd - cloneStart,
    'agent setup': firstModel - cloneEnd,
    'model (double)': model,
    'tools + events': finishResult.end - firstModel - model,
    validation: validation.start - finishResult.end,
    commit: commit.at(-1)!.end - validation.start,
    push: push.at(-1)!.end - commit.at(-1)!.end,
    'pull request': pull.start - pushed.start,
    'runner end': trace.runEnd! - pull.start,
    'finish run': trace.done! - trace.runEnd!,
  };
}

// ---------------------------------------------------------------------------------------------
// One run each way.

interface Bench {
  app: App;
  gitServer: GitHttpServer;
  github: GitHubApi;
  model: ScriptedServer;
}

async function docwrightRun(bench: Bench, projectId: string, edit: Edit): Promise<Trace> {
  bench.model.push(
    toolCall('read_file', { path: edit.file }),
    toolCall('edit_file', { path: edit.file, old_string: edit.oldString, new_string: edit.newString }),
    toolCall('finish', { title: 'Benchmark edit', summary: 'One scripted edit.' }),
  );
  const trace: Trace = { created: performance.now(), git: [], model: [], events: [] };
  tracing = trace;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  let jobId: string | undefined;
  let checking = false;
  const check = async () => {
    if (!jobId || trace.runEnd === undefined || checking) return;
    checking = true;
    try {
      const job = await bench.app.jobs.get(projectId, jobId);
      if (job.status === 'active') return;
      trace.done = performance.now();
      if (job.status !== 'completed' || !job.prLink)
        throw new Error(`job ended ${job.status}: ${JSON.stringify(job.error)}`);
      resolveDone();
    } finally {
      checking = false;
    }
  };
  // The worker publishes a job event once it has recorded the outcome.
  let failure: unknown;
  const unsubscribe = bench.app.signals.subscribe((signal) => {
    if (signal.kind === 'job-event' && signal.jobId === jobId)
      void check().catch((error) => {
        failure = error;
        resolveDone();
      });
  });
  try {
    const created = await bench.app.jobs.create(projectId, { prompt: 'Apply the benchmark edit.' });
    jobId = (created.body as { id: string }).id;
    const timeout = setTimeout(() => {
      failure = new Error(`job ${jobId} did not end within 120 s`);
      resolveDone();
    }, 120_000);
    // In case the final signal came before the job id was known.
    const poll = setInterval(() => void check().catch(() => {}), 250);
    await done;
    clearTimeout(timeout);
    clearInterval(poll);
    if (failure) throw failure;
    // The worker removes the checkout after recording the outcome; let it finish so that it does
    // not overlap (and slow) the next measurement.
    while (readdirSync(tmpdir()).some((name) => name.startsWith('docwright-run-'))) await sleep(5);
    return trace;
  } finally {
    unsubscribe();
    tracing = null;
  }
}

let bareCount = 0;

/** Wall times of one bare run, and (outside its total) of removing its working copy. */
interface BareRun {
  total: number;
  steps: Record<'clone' | 'edit' | 'commit' | 'push' | 'rm (not counted)', number>;
}

/** `git clone --depth 1` + the same edit + commit + push of a new branch. */
async function bareRun(url: string, edit: Edit): Promise<BareRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-bare-'));
  const env = {
    ...process.env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
    ...gitCredentialEnv(url, { username: USERNAME, token: TOKEN }),
  };
  // Asynchronous: the git server runs in this process and must keep answering.
  const git = (...gitArgs: string[]) => execFileAsync('git', gitArgs, { cwd: dir, env });
  const branch = `bare/${++bareCount}`;
  const marks = [performance.now()];
  try {
    await git('clone', '--quiet', '--depth', '1', '--branch', 'main', '--', url, '.');
    marks.push(performance.now());
    const file = path.join(dir, edit.file);
    writeFileSync(file, readFileSync(file, 'utf8').replace(edit.oldString, edit.newString));
    marks.push(performance.now());
    await git('commit', '--quiet', '-m', 'Benchmark edit', '--', edit.file);
    marks.push(performance.now());
    await git('push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`);
    marks.push(performance.now());
  } finally {
    rmSync(dir, { recursive: true, force: true });
    marks.push(performance.now());
  }
  const step = (i: number) => marks[i + 1]! - marks[i]!;
  return {
    total: marks[4]! - marks[0]!,
    steps: { clone: step(0), edit: step(1), commit: step(2), push: step(3), 'rm (not counted)': step(4) },
  };
}

interface Result {
  name: string;
  pages: number;
  runs: number;
  total: number[];
  model: number[];
  net: number[];
  bare: number[];
  phases: Record<Phase, number>[];
  /** Per docwright run: wall ms of each git subcommand (summed when it ran more than once). */
  gitCommands: Record<string, number>[];
  bareSteps: BareRun['steps'][];
  fixture: boolean;
}

async function measure(bench: Bench, c: Case): Promise<Result> {
  log(`${c.name}: creating the served repository…`);
  // The clone URL without `.git`, as a GitHub project is configured; bare git uses the same.
  const url = (await bench.gitServer.createRepository(c.repo, c.dir)).replace(/\.git$/, '');
  bench.github.addRepo(c.repo, { branches: ['main'] });
  const pages = Number(
    bench.gitServer
      .git(c.repo, 'ls-tree', '-r', '--name-only', 'main')
      .split('\n')
      .filter((f) => /\.mdx?$/.test(f)).length,
  );
  const project = await bench.app.projects.create({
    name: c.name,
    repository: url,
    host: 'github',
    apiUrl: bench.github.baseUrl,
    token: TOKEN,
    ref: 'main',
    openaiCompatibleBaseUrl: bench.model.url,
    rateLimit: 1_000_000,
  });
  const warmup = Number(args.warmup);
  const result: Result = {
    name: c.name,
    pages,
    runs: c.runs,
    total: [],
    model: [],
    net: [],
    bare: [],
    phases: [],
    gitCommands: [],
    bareSteps: [],
    fixture: c.fixture,
  };
  for (let i = 0; i < warmup + c.runs; i++) {
    const measured = i >= warmup;
    let figures = { total: 0, model: 0, bare: 0 };
    // Alternate which goes first, so that neither always runs on a warmer cache.
    for (const which of i % 2 === 0 ? ['docwright', 'bare'] : ['bare', 'docwright']) {
      if (which === 'bare') {
        const bare = await bareRun(url, c.edit);
        figures.bare = bare.total;
        if (measured) result.bareSteps.push(bare.steps);
        continue;
      }
      const trace = await docwrightRun(bench, project.id, c.edit);
      if (i === 0) verifyBranch(bench, c, trace);
      figures = { ...figures, total: trace.done! - trace.created, model: sum(trace.model) };
      if (measured) {
        result.phases.push(phases(trace));
        const commands: Record<string, number> = {};
        for (const g of trace.git) commands[g.name] = (commands[g.name] ?? 0) + g.end - g.start;
        result.gitCommands.push(commands);
      }
    }
    if (measured) {
      result.total.push(figures.total);
      result.model.push(figures.model);
      result.net.push(figures.total - figures.model);
      result.bare.push(figures.bare);
    }
    log(
      `  ${measured ? `run ${i - warmup + 1}/${c.runs}` : 'warm-up'}: docwright ${ms(figures.total)} ` +
        `(model ${ms(figures.model)}), bare ${ms(figures.bare)}`,
    );
  }
  return result;
}

/** The first run's branch holds exactly the edit, and its pull request exists. */
function verifyBranch(bench: Bench, c: Case, trace: Trace) {
  const pulls = bench.github.repo(c.repo).pulls;
  const head = pulls.at(-1)?.head;
  if (!head || trace.events.every((e) => e.name !== 'pull_request.ready'))
    throw new Error('no pull request was opened');
  const changed = bench.gitServer.git(c.repo, 'diff', '--name-only', `main..${head}`).trim();
  if (changed !== c.edit.file) throw new Error(`the branch ${head} changed ${JSON.stringify(changed)}`);
}

// ---------------------------------------------------------------------------------------------
// Cases and report.

function cases(): { ready: Case[]; skipped: string[] } {
  const only = new Set(args.only.split(','));
  const ready: Case[] = [];
  const skipped: string[] = [];
  if (only.has('fixture')) {
    if (existsSync(FIXTURE)) {
      const oldString = 'ready to customize and update.';
      if (!readFileSync(path.join(FIXTURE, 'quickstart.mdx'), 'utf8').includes(oldString))
        throw new Error(`quickstart.mdx of ${FIXTURE} no longer holds the edited sentence`);
      ready.push({
        name: 'mintlify fixture',
        repo: 'bench/fixture',
        dir: FIXTURE,
        temporary: false,
        edit: { file: 'quickstart.mdx', oldString, newString: 'ready to customize, update and ship.' },
        runs: Number(args.runs),
        fixture: true,
      });
    } else skipped.push(`mintlify fixture: skipped (${FIXTURE} is absent)`);
  }
  if (only.has('large')) {
    log(`generating a ${args.pages}-page site…`);
    ready.push({
      name: `generated ${Number(args.pages).toLocaleString('en-US')} pages`,
      repo: 'bench/large',
      dir: generateSite(Number(args.pages)),
      temporary: true,
      edit: {
        file: 'tab0/group0/page-0.mdx',
        oldString: 'Line 3 of page 0 explains option_3 and the rate limit.',
        newString: 'Line 3 of page 0 explains option_3 and the rate limit of 100 requests per minute.',
      },
      runs: Number(args['large-runs']),
      fixture: false,
    });
  }
  return { ready, skipped };
}

function report(results: Result[], skipped: string[]) {
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(
    `\ndocwright pipeline benchmark — node ${process.version}, ${availableParallelism()} CPUs, load ${load}, ` +
      `SQLite, git smart HTTP + GitHub API double on loopback, temp dir ${tmpdir()}, warm-up ${args.warmup} excluded\n`,
  );
  for (const line of skipped) console.log(line);
  const row = (label: string, values: number[]) =>
    console.log(
      `  ${label.padEnd(38)}${ms(percentile(values, 50)).padStart(11)}${ms(percentile(values, 90)).padStart(11)}${ms(Math.max(...values)).padStart(11)}`,
    );
  for (const r of results) {
    console.log(`${r.name} (${r.pages.toLocaleString('en-US')} pages, ${r.runs} runs)`);
    console.log(`  ${''.padEnd(38)}${'p50'.padStart(11)}${'p90'.padStart(11)}${'max'.padStart(11)}`);
    row('docwright, job created → completed', r.total);
    row('  of which model double', r.model);
    row('docwright net (everything but model)', r.net);
    row('bare clone+edit+commit+push', r.bare);
    console.log('  docwright phases (median of each):');
    for (const phase of PHASES) {
      const values = r.phases.map((p) => p[phase]);
      console.log(`    ${phase.padEnd(16)}${ms(percentile(values, 50)).padStart(11)}`);
    }
    const median = (rows: Record<string, number>[], key: string) =>
      percentile(
        rows.map((x) => x[key] ?? 0),
        50,
      );
    const commands = [...new Set(r.gitCommands.flatMap((x) => Object.keys(x)))];
    console.log(
      `  docwright git processes (median): ${commands.map((k) => `${k} ${ms(median(r.gitCommands, k))}`).join(', ')}`,
    );
    console.log(
      `  bare steps (median): ${Object.keys(r.bareSteps[0] ?? {})
        .map((k) => `${k} ${ms(median(r.bareSteps, k))}`)
        .join(', ')}`,
    );
    console.log('');
  }
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  for (const r of results) {
    const ratio = percentile(r.net, 50) / percentile(r.bare, 50);
    console.log(
      `${r.name}: net p50 / bare p50 = ${ratio.toFixed(2)}×  target ≤ ${RATIO_TARGET}×: ${verdict(ratio <= RATIO_TARGET)}`,
    );
    if (r.fixture) {
      const p50 = percentile(r.net, 50);
      console.log(
        `${r.name}: net p50 = ${ms(p50)}  target < ${ms(FIXTURE_P50_TARGET_MS)}: ${verdict(p50 < FIXTURE_P50_TARGET_MS)}`,
      );
    }
  }
}

/** `owner/name` of a served repository's URL. */
const repoOf = (url: string) => new URL(url).pathname.slice(1);

async function main() {
  const { ready, skipped } = cases();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-pipeline-'));
  const gitServer = await startGitHttpServer({ tokens: { [TOKEN]: 'write' }, username: USERNAME });
  const github = await startGitHubApi({ tokens: { [TOKEN]: { push: true } } });
  const model = await startOpenAIServer();
  modelUrl = model.url;
  const app = await openApp(
    loadConfig({
      DOCWRIGHT_DATA_DIR: dataDir,
      DOCWRIGHT_MODEL: 'openai-compatible/scripted',
      DOCWRIGHT_LOG_LEVEL: 'silent',
    }),
    { logger: createLogger('silent') },
  );
  const bench: Bench = { app, gitServer, github, model };
  const runner = tracedRunner(createAgentRunner(app), async (job) => {
    // GitHub learns of branches from pushes; the double is told before the run starts.
    const project = await app.projects.get(job.projectId);
    github.repo(repoOf(project.repository)).branches.add(headBranch(project.settings, job.id));
  });
  const worker = new Worker(app, { runner, concurrency: 1 });
  worker.start();
  const results: Result[] = [];
  try {
    for (const c of ready) {
      try {
        results.push(await measure(bench, c));
      } finally {
        if (c.temporary) rmSync(c.dir, { recursive: true, force: true });
      }
    }
    if (github.violations.length > 0)
      throw new Error(`the GitHub double saw invalid requests: ${JSON.stringify(github.violations)}`);
  } finally {
    await worker.stop(0);
    await app.close();
    await Promise.all([gitServer.close(), github.close(), model.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
  report(results, skipped);
}

await main();
