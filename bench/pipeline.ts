/**
 * Pipeline benchmark: `node bench/pipeline.ts [--runs 15] [--large-runs 5] [--mono-runs 5]
 * [--pages 10000] [--code-files 100000] [--warmup 1] [--only fixture,large,mono,mono-second]
 * [--tmp DIR]`.
 *
 * Everything but model time: one job through the production pipeline — a Worker claiming the
 * run and calling `createPipeline(app)` (checkout → scripted edit → validation → commit → push
 * → diff → pull request) — timed from `jobs.create` to its `completed` status. The repository is
 * served by a real git smart-HTTP server (token auth), the pull request opened on the GitHub API
 * double, the model is the scripted OpenAI-compatible double (read_file → edit_file → finish), the
 * database a throw-away SQLite. Model time is measured on the double's side (from a request's
 * arrival to the end of its answer: the agent runs in a child process of its own) and subtracted
 * ("net").
 *
 * Cases, each against bare git in the same run, interleaved with docwright's runs (alternating
 * which goes first), with the same credentials in the environment:
 * - `fixture`, `large` (the Mintlify fixture; a generated site of `--pages` pages): a first job
 *   (the project's mirror is removed before each docwright run) against today's baseline, a full
 *   `git clone --depth 1` + the same edit + `git commit` + `git push` of a new branch.
 * - `mono`: a generated monorepo (`--code-files` source files, 300 pages under `docs/`, some
 *   history; the project's docsDir is `docs`), first job, against `git clone --filter=blob:none
 *   --sparse --depth 1` + `sparse-checkout set docs` + edit + commit + push (target ≤ 1.5×), and
 *   against the full shallow clone.
 * - `mono-second`: the second job on the same monorepo project (warm mirror; one upstream commit
 *   lands before every run), against `git fetch` into a warm local mirror + `git worktree add`
 *   (sparse: docs/) + edit + commit + push (target ≤ 1.2×), and against the full shallow clone.
 *
 * Prints p50/p90/max of each, the ratios of the p50s, and a per-phase breakdown of docwright's
 * runs (from its git processes, the double's requests and job events).
 *
 * Checkouts go to the system's temporary directory, as in production; `--tmp DIR` puts them (and
 * the served repositories) elsewhere, e.g. `--tmp /dev/shm` to see the pipeline's own costs on a
 * machine whose disk creates files slowly (then a 10,000-page clone is mostly file creation).
 */
import { type ChildProcess, execFile, execFileSync } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { type App, openApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { gitCredentialEnv } from '../src/git/credentials.ts';
import { createLogger } from '../src/logger.ts';
import { createPipeline } from '../src/pipeline/pipeline.ts';
import type { RunnableJob, Runner } from '../src/pipeline/runner.ts';
import { headBranch } from '../src/projects/head-branch.ts';
import { processRunDirectory } from '../src/worker/run-directories.ts';
import { Worker } from '../src/worker/worker.ts';
import { type GitHttpServer, startGitHttpServer } from '../test/doubles/git-http-server.ts';
import { type GitHubApi, startGitHubApi } from '../test/doubles/github-api.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../test/doubles/openai-server.ts';
import {
  addUpstreamCommit,
  FIXTURE,
  FIXTURE_ABSENT,
  generateMonorepo,
  generateSite,
  type Monorepo,
} from './site.ts';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    'large-runs': { type: 'string', default: '5' },
    'mono-runs': { type: 'string', default: '5' },
    pages: { type: 'string', default: '10000' },
    'code-files': { type: 'string', default: '100000' },
    warmup: { type: 'string', default: '1' },
    only: { type: 'string', default: 'fixture,large,mono,mono-second' },
    tmp: { type: 'string' },
  },
});
// Where every checkout, working copy and served repository goes (os.tmpdir() reads TMPDIR).
if (args.tmp) process.env.TMPDIR = path.resolve(args.tmp);
const TOKEN = 'ghp_benchPipelineToken0123456789abcdef';
const USERNAME = 'x-access-token';
const FIXTURE_P50_TARGET_MS = 2_000;
const log = (message: string) => process.stderr.write(`${message}\n`);
const execFileAsync = promisify(execFile);

interface Edit {
  file: string;
  oldString: string;
  newString: string;
}

/** A bare-git way of making the same change, timed step by step. */
interface Baseline {
  name: string;
  /** The ratio docwright's net p50 should stay under, if this baseline has a target. */
  target?: number;
  run(url: string, edit: Edit): Promise<BareRun>;
}

interface Case {
  name: string;
  repo: string;
  /** Makes the served repository; returns its clone URL. */
  serve(server: GitHttpServer): Promise<string>;
  edit: Edit;
  runs: number;
  docsDir?: string;
  /** Keep the project's mirror between runs (a second job); otherwise it is removed before each. */
  warmMirror: boolean;
  /** Called before every run (docwright's and bare's): work landing upstream between jobs. */
  beforeEach?: () => void;
  baselines: Baseline[];
  fixture: boolean;
  cleanup?: () => void;
}

// ---------------------------------------------------------------------------------------------
// Instrumentation: git processes (diagnostics channel), model requests (the double), job events.

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

/** The git subcommand of a spawn's argv, past a wrapper (`setpriv … --`) and `-c key=value` options. */
function gitCommand(argv: string[]): string | undefined {
  const at = argv.findIndex((arg, i) => path.basename(arg) === 'git' && (i === 0 || argv[i - 1] === '--'));
  if (at < 0) return undefined;
  for (let i = at + 1; i < argv.length; i++) {
    if (argv[i] === '-c' || argv[i] === '-C') i++;
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

/** The production runner, with its start, end and emitted events timed; tells GitHub about the branch. */
function tracedRunner(inner: Runner, onStart: (job: RunnableJob) => Promise<void>): Runner {
  const traced: Runner = async (job, run, tools) => {
    const trace = tracing;
    await onStart(job);
    if (trace) trace.runStart = performance.now();
    try {
      return await inner(job, run, {
        ...tools,
        emit: async (type, data) => {
          const start = performance.now();
          await tools.emit(type, data);
          trace?.events.push({ name: type, start, end: performance.now() });
        },
      });
    } finally {
      if (trace) trace.runEnd = performance.now();
    }
  };
  traced.close = inner.close;
  return traced;
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
  'checkout',
  'agent setup',
  'model (double)',
  'tools + events',
  'validation',
  'commit',
  'push',
  'diff',
  'pull request',
  'runner end',
  'finish run',
] as const;
type Phase = (typeof PHASES)[number];

const COMMIT_COMMANDS = ['read-tree', 'update-index', 'write-tree', 'rev-parse', 'commit-tree', 'update-ref'];

/** Splits one traced run into consecutive phases (they add up to its total). */
function phases(trace: Trace): Record<Phase, number> {
  const event = (type: string) => trace.events.find((e) => e.name === type);
  const firstModel = trace.model[0]?.start ?? Number.POSITIVE_INFINITY;
  // The checkout's git processes are those that ended before the first model request.
  const checkout = trace.git.filter((s) => s.end <= firstModel);
  const finishResult = trace.events.filter((e) => e.name === 'agent.tool_result').at(-1);
  const validation = event('agent.validation');
  const pushed = event('git.pushed');
  const pull = event('pull_request.ready');
  const push = trace.git.filter((s) => s.name === 'push');
  const commit = trace.git.filter(
    (s) => s.start >= firstModel && s.end <= (push[0]?.start ?? 0) && COMMIT_COMMANDS.includes(s.name),
  );
  if (!checkout.length || !commit.length || !push.length || !trace.model.length)
    throw new Error(`incomplete trace: ${JSON.stringify(trace.git.map((g) => g.name))}`);
  if (!finishResult || !validation || !pushed || !pull) throw new Error('missing job events');
  const diff = trace.git.filter((s) => s.start >= pushed.end && s.end <= pull.start);
  const runStart = trace.runStart!;
  const checkoutStart = Math.min(...checkout.map((s) => s.start));
  const checkoutEnd = Math.max(...checkout.map((s) => s.end));
  const model = sum(trace.model);
  const commitEnd = commit.at(-1)!.end;
  const pushEnd = push.at(-1)!.end;
  const diffEnd = diff.length ? Math.max(...diff.map((s) => s.end)) : pushed.end;
  return {
    'queue → runner': runStart - trace.created,
    'runner setup': checkoutStart - runStart,
    checkout: checkoutEnd - checkoutStart,
    'agent setup': firstModel - checkoutEnd,
    'model (double)': model,
    'tools + events': finishResult.end - firstModel - model,
    validation: validation.start - finishResult.end,
    commit: commitEnd - validation.start,
    push: pushEnd - commitEnd,
    diff: diffEnd - pushEnd,
    'pull request': pull.start - diffEnd,
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
  const firstRequest = bench.model.requests.length;
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
    jobId = created.job.id;
    const timeout = setTimeout(() => {
      failure = new Error(`job ${jobId} did not end within 300 s`);
      resolveDone();
    }, 300_000);
    // In case the final signal came before the job id was known.
    const poll = setInterval(() => void check().catch(() => {}), 250);
    await done;
    clearTimeout(timeout);
    clearInterval(poll);
    if (failure) throw failure;
    // The model's time, as the double served it (the agent's process made the requests).
    for (const request of bench.model.requests.slice(firstRequest)) {
      trace.model.push({
        name: 'model',
        start: request.served.start,
        end: request.served.end ?? request.served.start,
      });
    }
    // The worker removes the checkout after recording the outcome; let it finish so that it does
    // not overlap (and slow) the next measurement.
    while (readdirSync(processRunDirectory()).length > 0) await sleep(5);
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
  steps: Record<string, number>;
}

const bareEnv = (url: string) => ({
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
  ...gitCredentialEnv(url, { username: USERNAME, token: TOKEN }),
});

/**
 * Times `steps` in order in a new working directory (removed afterwards, not counted): each step
 * gets a git runner for the directory; `edit` is applied between the `checkout` steps and the rest.
 */
async function timedBareRun(
  url: string,
  edit: Edit,
  checkoutSteps: [string, (git: (...a: string[]) => Promise<unknown>, dir: string) => Promise<unknown>][],
  afterSteps: [string, (git: (...a: string[]) => Promise<unknown>, dir: string) => Promise<unknown>][] = [],
): Promise<BareRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-bare-'));
  const env = bareEnv(url);
  // Asynchronous: the git server runs in this process and must keep answering.
  const git = (...gitArgs: string[]) => execFileAsync('git', gitArgs, { cwd: dir, env, maxBuffer: 1 << 26 });
  const branch = `bare/${++bareCount}`;
  const steps: Record<string, number> = {};
  const start = performance.now();
  let mark = start;
  const step = async (name: string, work: () => Promise<unknown> | unknown) => {
    await work();
    const now = performance.now();
    steps[name] = now - mark;
    mark = now;
  };
  try {
    for (const [name, work] of checkoutSteps) await step(name, () => work(git, dir));
    await step('edit', () => {
      const file = path.join(dir, edit.file);
      writeFileSync(file, readFileSync(file, 'utf8').replace(edit.oldString, edit.newString));
    });
    await step('commit', () => git('commit', '--quiet', '-m', 'Benchmark edit', '--', edit.file));
    await step('push', () => git('push', '--quiet', url, `HEAD:refs/heads/${branch}`));
  } finally {
    const total = performance.now() - start;
    for (const [, work] of afterSteps) await work(git, dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    steps['rm (not counted)'] = performance.now() - mark;
    steps.total = total;
  }
  const { total, ...rest } = steps;
  return { total: total!, steps: rest };
}

/** Today's baseline: `git clone --depth 1` + the edit + commit + push of a new branch. */
const shallowClone: Baseline = {
  name: 'bare full shallow clone+edit+commit+push',
  run: (url, edit) =>
    timedBareRun(url, edit, [
      ['clone', (git) => git('clone', '--quiet', '--depth', '1', '--branch', 'main', '--', url, '.')],
    ]),
};

/** A partial, sparse, shallow clone of `folder`. */
const sparseClone = (folder: string, target: number): Baseline => ({
  name: `bare clone --filter=blob:none --sparse --depth 1 (${folder}/)+edit+commit+push`,
  target,
  run: (url, edit) =>
    timedBareRun(url, edit, [
      [
        'clone',
        (git) =>
          git(
            'clone',
            '--quiet',
            '--filter=blob:none',
            '--sparse',
            '--depth',
            '1',
            '--branch',
            'main',
            '--',
            url,
            '.',
          ),
      ],
      ['sparse-checkout', (git) => git('sparse-checkout', 'set', '--cone', folder)],
    ]),
});

/** A warm local mirror (kept by the benchmark): `git fetch` into it, then `git worktree add` of `folder`. */
function mirrorWorktree(folder: string, target: number): Baseline & { mirror: string } {
  const mirror = mkdtempSync(path.join(tmpdir(), 'docwright-bench-mirror-'));
  return {
    mirror,
    name: `bare git fetch + worktree add (${folder}/) from a warm mirror+edit+commit+push`,
    target,
    run: async (url, edit) => {
      const inMirror = (...a: string[]) =>
        execFileAsync('git', ['-c', 'protocol.file.allow=always', ...a], { cwd: mirror, env: bareEnv(url) });
      if (!existsSync(path.join(mirror, 'HEAD'))) {
        await inMirror('init', '--quiet', '--bare');
        await inMirror('config', 'remote.origin.url', url);
        // Sparse worktrees of a bare repository: core.bare must be the main worktree's own setting.
        await inMirror('config', 'extensions.worktreeConfig', 'true');
        await inMirror('config', '--unset', 'core.bare');
        await inMirror('config', '--worktree', 'core.bare', 'true');
        await inMirror('config', 'core.repositoryformatversion', '1');
        await inMirror('config', 'extensions.partialClone', 'origin');
        await inMirror('config', 'remote.origin.promisor', 'true');
        await inMirror('config', 'remote.origin.partialclonefilter', 'blob:none');
      }
      return timedBareRun(
        url,
        edit,
        [
          [
            'fetch',
            () =>
              inMirror(
                'fetch',
                '--quiet',
                '--depth',
                '1',
                '--filter=blob:none',
                'origin',
                '+refs/heads/main:refs/heads/main',
              ),
          ],
          [
            'worktree add',
            (_git, dir) => inMirror('worktree', 'add', '--quiet', '--detach', '--no-checkout', dir, 'main'),
          ],
          ['sparse-checkout', (git) => git('sparse-checkout', 'set', '--cone', folder)],
          ['checkout', (git) => git('checkout', '--quiet')],
        ],
        [['worktree remove', (_git, dir) => inMirror('worktree', 'remove', '--force', dir)]],
      );
    },
  };
}

interface Result {
  name: string;
  pages: number;
  files: number;
  runs: number;
  total: number[];
  model: number[];
  net: number[];
  bare: Record<string, number[]>;
  phases: Record<Phase, number>[];
  /** Per docwright run: wall ms of each git subcommand (summed when it ran more than once). */
  gitCommands: Record<string, number>[];
  bareSteps: Record<string, Record<string, number>[]>;
  baselines: Baseline[];
  fixture: boolean;
}

async function measure(bench: Bench, c: Case): Promise<Result> {
  log(`${c.name}: creating the served repository…`);
  // The clone URL without `.git`, as a GitHub project is configured; bare git uses the same.
  const url = (await c.serve(bench.gitServer)).replace(/\.git$/, '');
  bench.github.addRepo(c.repo, { branches: ['main'] });
  const tree = execFileSync('git', ['ls-tree', '-r', '--name-only', 'main'], {
    cwd: path.join(bench.gitServer.root, `${c.repo}.git`),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  }).split('\n');
  const project = await bench.app.projects.create({
    name: c.name,
    repository: url,
    host: 'github',
    apiUrl: bench.github.baseUrl,
    token: TOKEN,
    ref: 'main',
    docsDir: c.docsDir,
    openaiCompatibleBaseUrl: bench.model.url,
    rateLimit: 1_000_000,
  });
  const warmup = Number(args.warmup);
  const result: Result = {
    name: c.name,
    pages: tree.filter((f) => /\.mdx?$/.test(f)).length,
    files: tree.filter(Boolean).length,
    runs: c.runs,
    total: [],
    model: [],
    net: [],
    bare: Object.fromEntries(c.baselines.map((b) => [b.name, []])),
    phases: [],
    gitCommands: [],
    bareSteps: Object.fromEntries(c.baselines.map((b) => [b.name, []])),
    baselines: c.baselines,
    fixture: c.fixture,
  };
  // Absent in versions before the mirror cache (the benchmark also measures them, for a baseline).
  const mirrors = (bench.app.config as { mirrors?: { dir: string } }).mirrors?.dir;
  for (let i = 0; i < warmup + c.runs; i++) {
    const measured = i >= warmup;
    const order: (Baseline | 'docwright')[] = ['docwright', ...c.baselines];
    // Alternate which goes first, so that neither always runs on a warmer cache.
    if (i % 2 === 1) order.reverse();
    const line: string[] = [];
    for (const which of order) {
      c.beforeEach?.();
      if (which !== 'docwright') {
        const bare = await which.run(url, c.edit);
        line.push(`${which.name.split(' ').slice(0, 3).join(' ')}… ${ms(bare.total)}`);
        if (measured) {
          result.bare[which.name]!.push(bare.total);
          result.bareSteps[which.name]!.push(bare.steps);
        }
        continue;
      }
      // A first job: nothing cached from earlier runs.
      if (!c.warmMirror && mirrors) rmSync(mirrors, { recursive: true, force: true });
      const trace = await docwrightRun(bench, project.id, c.edit);
      // What a run leaves going once its outcome is recorded (removing its checkout, starting the
      // next run's agent process) ends before anything else is measured.
      await sleep(1_000);
      if (i === 0) verifyBranch(bench, c, trace);
      const total = trace.done! - trace.created;
      const model = sum(trace.model);
      line.unshift(`docwright ${ms(total)} (model ${ms(model)})`);
      if (measured) {
        result.total.push(total);
        result.model.push(model);
        result.net.push(total - model);
        result.phases.push(phases(trace));
        const commands: Record<string, number> = {};
        for (const g of trace.git) commands[g.name] = (commands[g.name] ?? 0) + g.end - g.start;
        result.gitCommands.push(commands);
      }
    }
    log(`  ${measured ? `run ${i - warmup + 1}/${c.runs}` : 'warm-up'}: ${line.join(', ')}`);
  }
  return result;
}

/** The first run's branch holds exactly the edit (over the whole tree), and its pull request exists. */
function verifyBranch(bench: Bench, c: Case, trace: Trace) {
  const pulls = bench.github.repo(c.repo).pulls;
  const head = pulls.at(-1)?.head;
  if (!head || trace.events.every((e) => e.name !== 'pull_request.ready'))
    throw new Error('no pull request was opened');
  const base = bench.gitServer.git(c.repo, 'rev-parse', `${head}^`).trim();
  const changed = bench.gitServer.git(c.repo, 'diff', '--name-only', `${base}..${head}`).trim();
  if (changed !== c.edit.file) throw new Error(`the branch ${head} changed ${JSON.stringify(changed)}`);
}

// ---------------------------------------------------------------------------------------------
// Cases and report.

/** A served repository made from a directory of files. */
const servedFrom = (repo: string, dir: string) => (server: GitHttpServer) =>
  server.createRepository(repo, dir);

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
        name: 'mintlify fixture, first job',
        repo: 'bench/fixture',
        serve: servedFrom('bench/fixture', FIXTURE),
        edit: { file: 'quickstart.mdx', oldString, newString: 'ready to customize, update and ship.' },
        runs: Number(args.runs),
        warmMirror: false,
        baselines: [{ ...shallowClone, target: 1.5 }],
        fixture: true,
      });
    } else skipped.push(`mintlify fixture: skipped (${FIXTURE_ABSENT})`);
  }
  if (only.has('large')) {
    log(`generating a ${args.pages}-page site…`);
    const dir = generateSite(Number(args.pages));
    ready.push({
      name: `generated ${Number(args.pages).toLocaleString('en-US')} pages, first job`,
      repo: 'bench/large',
      serve: servedFrom('bench/large', dir),
      edit: {
        file: 'tab0/group0/page-0.mdx',
        oldString: 'Line 3 of page 0 explains option_3 and the rate limit.',
        newString: 'Line 3 of page 0 explains option_3 and the rate limit of 100 requests per minute.',
      },
      runs: Number(args['large-runs']),
      warmMirror: false,
      baselines: [{ ...shallowClone, target: 1.5 }],
      fixture: false,
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    });
  }
  const mono: Monorepo = { codeFiles: Number(args['code-files']), pages: 300, commits: 10 };
  const monoEdit: Edit = {
    file: 'docs/guides/page-0.mdx',
    oldString: 'Line 3 of guide 0 explains option_3 and the rate limit.',
    newString: 'Line 3 of guide 0 explains option_3 and the rate limit of 100 requests per minute.',
  };
  const serveMonorepo = (repo: string) => async (server: GitHttpServer) => {
    const bare = path.join(server.root, `${repo}.git`);
    mkdirSync(bare, { recursive: true });
    const git = (...a: string[]) => execFileSync('git', a, { cwd: bare, stdio: 'pipe' });
    git('init', '--quiet', '--bare', '--initial-branch', 'main');
    log(
      `  generating a monorepo of ${mono.codeFiles.toLocaleString('en-US')} source files and ${mono.pages} pages…`,
    );
    generateMonorepo(bare, mono);
    git('config', 'http.receivepack', 'true');
    git('config', 'uploadpack.allowFilter', 'true');
    git('config', 'uploadpack.allowAnySHA1InWant', 'true');
    return `${server.baseUrl}/${repo}.git`;
  };
  const monoRuns = Number(args['mono-runs']);
  if (only.has('mono')) {
    ready.push({
      name: `monorepo (${mono.codeFiles.toLocaleString('en-US')} source files, docs/), first job`,
      repo: 'bench/mono',
      serve: serveMonorepo('bench/mono'),
      edit: monoEdit,
      docsDir: 'docs',
      runs: monoRuns,
      warmMirror: false,
      baselines: [sparseClone('docs', 1.5), shallowClone],
      fixture: false,
    });
  }
  if (only.has('mono-second')) {
    const worktree = mirrorWorktree('docs', 1.2);
    let upstream = mono.commits;
    let bare = '';
    ready.push({
      name: `monorepo (${mono.codeFiles.toLocaleString('en-US')} source files, docs/), second job`,
      repo: 'bench/mono2',
      serve: async (server) => {
        const url = await serveMonorepo('bench/mono2')(server);
        bare = path.join(server.root, 'bench/mono2.git');
        return url;
      },
      edit: monoEdit,
      docsDir: 'docs',
      runs: monoRuns,
      warmMirror: true,
      beforeEach: () => addUpstreamCommit(bare, ++upstream, mono),
      baselines: [worktree, shallowClone],
      fixture: false,
      cleanup: () => rmSync(worktree.mirror, { recursive: true, force: true }),
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
      `  ${label.padEnd(78)}${ms(percentile(values, 50)).padStart(11)}${ms(percentile(values, 90)).padStart(11)}${ms(Math.max(...values)).padStart(11)}`,
    );
  const median = (rows: Record<string, number>[], key: string) =>
    percentile(
      rows.map((x) => x[key] ?? 0),
      50,
    );
  for (const r of results) {
    console.log(
      `${r.name} (${r.files.toLocaleString('en-US')} files, ${r.pages.toLocaleString('en-US')} pages, ${r.runs} runs)`,
    );
    console.log(`  ${''.padEnd(78)}${'p50'.padStart(11)}${'p90'.padStart(11)}${'max'.padStart(11)}`);
    row('docwright, job created → completed', r.total);
    row('  of which model double', r.model);
    row('docwright net (everything but model)', r.net);
    for (const b of r.baselines) row(b.name, r.bare[b.name]!);
    console.log('  docwright phases (median of each):');
    for (const phase of PHASES) {
      const values = r.phases.map((p) => p[phase]);
      console.log(`    ${phase.padEnd(16)}${ms(percentile(values, 50)).padStart(11)}`);
    }
    const commands = [...new Set(r.gitCommands.flatMap((x) => Object.keys(x)))];
    console.log(
      `  docwright git processes (median): ${commands.map((k) => `${k} ${ms(median(r.gitCommands, k))}`).join(', ')}`,
    );
    for (const b of r.baselines) {
      const steps = r.bareSteps[b.name]!;
      console.log(
        `  ${b.name.split(' ').slice(0, 3).join(' ')}… steps (median): ${Object.keys(steps[0] ?? {})
          .map((k) => `${k} ${ms(median(steps, k))}`)
          .join(', ')}`,
      );
    }
    console.log('');
  }
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  for (const r of results) {
    for (const b of r.baselines) {
      const ratio = percentile(r.net, 50) / percentile(r.bare[b.name]!, 50);
      const target = b.target === undefined ? '' : `  target ≤ ${b.target}×: ${verdict(ratio <= b.target)}`;
      console.log(`${r.name}: net p50 / ${b.name} p50 = ${ratio.toFixed(2)}×${target}`);
    }
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
  const app = await openApp(
    loadConfig({
      DOCWRIGHT_DATA_DIR: dataDir,
      DOCWRIGHT_MODEL: 'openai-compatible/scripted',
      DOCWRIGHT_LOG_LEVEL: 'silent',
    }),
    { logger: createLogger('silent') },
  );
  const bench: Bench = { app, gitServer, github, model };
  const runner = tracedRunner(createPipeline(app), async (job) => {
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
        c.cleanup?.();
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
