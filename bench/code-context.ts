/**
 * Code-context benchmark (docs/code-context.mdx, issue 25): `node bench/code-context.ts [--files 100000]
 * [--runs 3] [--search-mb 256] [--only first,second,memory] [--tmp DIR]`.
 *
 * A code repository of `--files` source files is served by the real git smart-HTTP server (token
 * auth), each case measured side by side with bare git, interleaved (alternating which goes first),
 * with the same credentials in the environment:
 * - `first`: the first job's context work — the repository's mirror made and fetched at the
 *   change's head (trees only), the change's diff (the host's work, approximated by `git diff` of
 *   the commit in the served repository), and the changed file and two neighbours read through
 *   the worker's code reader — against `git clone --filter=blob:none --no-checkout` (target ≤ 1.5×).
 * - `second`: the same on the warm mirror after a new upstream commit touching one file, against
 *   `git fetch` of that commit into a warm partial clone (target ≤ 1.5×).
 * - `memory`: the worker's resident memory while the agent's search reads a generated repository
 *   of `--search-mb` MiB (every file, folder by folder, each search bounded as the tool's), its
 *   blobs fetched lazily (target: < 100 MB growth).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openContextRepository } from '../src/git/context-repository.ts';
import { gitCredentialEnv } from '../src/git/credentials.ts';
import { git } from '../src/git/git.ts';
import { MirrorCache } from '../src/git/mirror.ts';
import { gitCodeContext } from '../src/pipeline/code-context.ts';
import { type GitHttpServer, startGitHttpServer } from '../test/doubles/git-http-server.ts';

const { values: args } = parseArgs({
  options: {
    files: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    'search-mb': { type: 'string', default: '256' },
    only: { type: 'string', default: 'first,second,memory' },
    tmp: { type: 'string' },
    trace: { type: 'boolean', default: false },
  },
});

// With --trace: every git process docwright starts, with its duration (the server's are left out).
if (args.trace) {
  subscribe('child_process', (message) => {
    const child = (message as { process: ChildProcess }).process;
    const start = performance.now();
    queueMicrotask(() => {
      const argv = child.spawnargs.join(' ');
      if (/http-backend|fast-import/.test(argv)) return;
      child.once('close', () =>
        console.log(
          `  [git ${(performance.now() - start).toFixed(0)} ms] ${argv.replace(/.*? git -c core.hooksPath=\/dev\/null -c protocol.file.allow=always /, '').slice(0, 140)}`,
        ),
      );
    });
  });
}
const FILES = Number(args.files);
const RUNS = Number(args.runs);
const SEARCH_MB = Number(args['search-mb']);
const ONLY = new Set(args.only.split(','));
const TMP = args.tmp ?? tmpdir();
const USER = 'x-access-token';
const TOKEN = 'bench_CODECONTEXT_token_1234567890';

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/** One fast-import commit on main. */
function commit(
  mark: number,
  message: string,
  files: [string, string][],
  time: number,
  from?: string,
): string {
  const parts = [
    'commit refs/heads/main',
    `mark :${mark}`,
    `committer Bench <bench@example.com> ${time} +0000`,
    `data ${Buffer.byteLength(message)}`,
    message,
  ];
  if (from) parts.push(`from ${from}`);
  for (const [file, content] of files)
    parts.push(`M 100644 inline ${file}`, `data ${Buffer.byteLength(content)}`, content);
  return `${parts.join('\n')}\n\n`;
}

const codePath = (i: number) =>
  `src/pkg${Math.floor(i / 10_000)}/mod${Math.floor(i / 100) % 100}/file-${i}.ts`;
const codeFile = (i: number, revision = 0): [string, string] => [
  codePath(i),
  `// Module ${i}, revision ${revision}.\nexport const value${i} = ${i * 7 + revision};\nexport function f${i}(x: number): number {\n  return x + value${i};\n}\n`,
];

function fastImport(bare: string, stream: string): void {
  execFileSync('git', ['fast-import', '--quiet'], {
    cwd: bare,
    input: stream,
    env: gitEnv,
    maxBuffer: 1 << 30,
  });
}

const head = (bare: string) =>
  execFileSync('git', ['rev-parse', 'main'], { cwd: bare, env: gitEnv, encoding: 'utf8' }).trim();

/** Lands a commit changing source file `i` on the served repository; returns [base, head]. */
function landChange(bare: string, i: number, revision: number): [string, string] {
  const base = head(bare);
  fastImport(bare, commit(1, `Change ${revision}`, [codeFile(i, revision)], 1_800_000_000 + revision, base));
  return [base, head(bare)];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (n: number) => `${n.toFixed(0)} ms`;

async function time(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

function sh(args: string[], cwd: string, env: Record<string, string>): Promise<string> {
  return git(args, { cwd, env, timeoutMs: 600_000 });
}

interface Setup {
  server: GitHttpServer;
  bare: string;
  url: string;
  env: Record<string, string>;
  work: string;
}

/** The first job's context work: mirror at the change head, the change's diff, three files read. */
async function contextWork(
  s: Setup,
  cache: MirrorCache,
  [base, tip]: [string, string],
  changed: number,
): Promise<void> {
  const started = performance.now();
  const opened = await openContextRepository({
    cache,
    project: 'bench',
    remote: s.url,
    env: s.env,
    commit: tip,
  });
  const fetched = performance.now();
  try {
    // The host's work: the change's diff (the lead resolves it through the host's API).
    execFileSync('git', ['diff', base, tip], { cwd: s.bare, env: gitEnv, maxBuffer: 1 << 26 });
    if (args.trace)
      console.log(
        `  open ${(fetched - started).toFixed(0)} ms, diff ${(performance.now() - fetched).toFixed(0)} ms`,
      );
    const reader = gitCodeContext({ readers: new Map([['code', opened.reader]]), maxFileBytes: 1 << 20 });
    const neighbours = [changed, changed + 1, changed + 2].map(codePath);
    for (const file of neighbours) {
      const read = await reader.read('code', file);
      if (read.kind !== 'file') throw new Error(`could not read ${file}: ${read.kind}`);
    }
  } finally {
    await opened.close();
  }
}

async function firstAndSecond(s: Setup): Promise<void> {
  const first = { docwright: [] as number[], bare: [] as number[] };
  const second = { docwright: [] as number[], bare: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    const changedFile = 1_000 + run * 10;
    const change = landChange(s.bare, changedFile, run + 1);
    const cacheDir = mkdtempSync(path.join(s.work, 'cache-'));
    const cloneDir = path.join(s.work, `clone-${run}`);
    const cache = new MirrorCache({ dir: cacheDir, maxBytes: 1 << 40 });
    const ours = () => contextWork(s, cache, change, changedFile);
    const theirs = () =>
      sh(['clone', '--quiet', '--filter=blob:none', '--no-checkout', '--', s.url, cloneDir], s.work, s.env);
    if (ONLY.has('first')) {
      if (run % 2 === 0) {
        first.docwright.push(await time(ours));
        first.bare.push(await time(theirs));
      } else {
        first.bare.push(await time(theirs));
        first.docwright.push(await time(ours));
      }
    } else {
      await ours();
      await theirs();
    }
    if (ONLY.has('second')) {
      // A new commit touching one file lands; both sides are warm.
      const next = changedFile + 5;
      const secondChange = landChange(s.bare, next, 100 + run);
      const ours2 = () => contextWork(s, cache, secondChange, next);
      const theirs2 = () => sh(['fetch', '--quiet', 'origin'], cloneDir, s.env);
      if (run % 2 === 0) {
        second.docwright.push(await time(ours2));
        second.bare.push(await time(theirs2));
      } else {
        second.bare.push(await time(theirs2));
        second.docwright.push(await time(ours2));
      }
    }
    rmSync(cacheDir, { recursive: true, force: true });
    rmSync(cloneDir, { recursive: true, force: true });
  }
  const line = (name: string, r: { docwright: number[]; bare: number[] }, baseline: string) => {
    if (r.docwright.length === 0) return;
    const ratio = median(r.docwright) / median(r.bare);
    // Each run's two sides ran back to back: the median of their ratios shrugs off load that
    // changes between runs (on a shared machine) better than the ratio of the medians.
    const paired = median(r.docwright.map((d, i) => d / r.bare[i]!));
    console.log(
      `${name.padEnd(7)} docwright p50 ${ms(median(r.docwright)).padStart(8)}  ${baseline} p50 ${ms(median(r.bare)).padStart(8)}  ratio ${ratio.toFixed(2)}× (target ≤ 1.50×; per-run ratios p50 ${paired.toFixed(2)}×)  runs: ${r.docwright.map(ms).join(', ')} | ${r.bare.map(ms).join(', ')}`,
    );
  };
  line('first', first, 'clone --filter=blob:none --no-checkout');
  line('second', second, 'git fetch (warm partial clone)');
}

/**
 * A repository of about `mb` MiB of text in 8 KiB files, in 16 folders, streamed into
 * `git fast-import` a commit at a time: the benchmark's own memory stays small, so that its
 * growth while searching is the reader's.
 */
async function generateLarge(bare: string, mb: number): Promise<{ folders: string[]; files: number }> {
  const perFile = 8 * 1024;
  const count = Math.ceil((mb * 1024 * 1024) / perFile);
  const folders = Array.from({ length: 16 }, (_, i) => `lib${i}`);
  const child = spawn('git', ['fast-import', '--quiet'], {
    cwd: bare,
    env: gitEnv,
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))),
  );
  let batch: [string, string][] = [];
  let mark = 0;
  const flush = async () => {
    mark++;
    const stream = commit(
      mark,
      `Part ${mark}`,
      batch,
      1_700_000_000 + mark,
      mark > 1 ? `:${mark - 1}` : undefined,
    );
    batch = [];
    if (!child.stdin.write(stream)) await once(child.stdin, 'drain');
  };
  for (let i = 0; i < count; i++) {
    const lines = Array.from(
      { length: Math.floor(perFile / 64) },
      (_, l) =>
        `// file ${i} line ${l}: ${((i * 2654435761 + l * 40503) >>> 0).toString(36).padEnd(40, 'x')}`,
    );
    batch.push([`${folders[i % folders.length]}/f${i}.ts`, `${lines.join('\n')}\n`]);
    if (batch.length === 500) await flush();
  }
  if (batch.length > 0) await flush();
  child.stdin.end();
  await exited;
  return { folders, files: count };
}

async function memory(s: Setup): Promise<void> {
  const bare = path.join(s.server.root, 'bench/large.git');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch', 'main', bare], { env: gitEnv });
  execFileSync('git', ['config', 'uploadpack.allowFilter', 'true'], { cwd: bare, env: gitEnv });
  execFileSync('git', ['config', 'uploadpack.allowAnySHA1InWant', 'true'], { cwd: bare, env: gitEnv });
  const generated = await generateLarge(bare, SEARCH_MB);
  const url = `${s.server.baseUrl}/bench/large.git`;
  const env = gitCredentialEnv(url, { username: USER, token: TOKEN });
  const cacheDir = mkdtempSync(path.join(s.work, 'large-cache-'));
  const cache = new MirrorCache({ dir: cacheDir, maxBytes: 1 << 40 });
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const started = performance.now();
  let scanned = 0;
  let matches = 0;
  try {
    const opened = await openContextRepository({ cache, project: 'bench', remote: url, env });
    try {
      const reader = gitCodeContext({ readers: new Map([['code', opened.reader]]), maxFileBytes: 1 << 20 });
      for (const folder of generated.folders) {
        const result = await reader.search('code', {
          pattern: 'line 7: zz',
          ignoreCase: false,
          path: folder,
          deadline: Date.now() + 600_000,
        });
        matches += result.total;
        scanned++;
        if (result.notes.length > 0) console.log(`  ${folder}: ${result.notes.join(' ')}`);
      }
    } finally {
      await opened.close();
    }
  } finally {
    clearInterval(sampler);
    rmSync(cacheDir, { recursive: true, force: true });
  }
  const growth = (peak - baseline) / (1024 * 1024);
  console.log(
    `memory  searched ${SEARCH_MB} MiB (${generated.files} files, ${scanned} searches, ${matches} matches) in ${ms(performance.now() - started)}; worker RSS growth ${growth.toFixed(1)} MB (target < 100 MB)`,
  );
}

async function main(): Promise<void> {
  const server = await startGitHttpServer({ tokens: { [TOKEN]: 'read' }, username: USER });
  const work = mkdtempSync(path.join(TMP, 'docwright-bench-code-'));
  try {
    if (ONLY.has('first') || ONLY.has('second')) {
      const bare = path.join(server.root, 'bench/code.git');
      execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch', 'main', bare], { env: gitEnv });
      execFileSync('git', ['config', 'uploadpack.allowFilter', 'true'], { cwd: bare, env: gitEnv });
      execFileSync('git', ['config', 'uploadpack.allowAnySHA1InWant', 'true'], { cwd: bare, env: gitEnv });
      const files: [string, string][] = [['README.md', '# Code\n']];
      for (let i = 0; i < FILES; i++) files.push(codeFile(i));
      const started = performance.now();
      fastImport(bare, commit(1, 'Initial import', files, 1_700_000_000));
      console.log(
        `code repository: ${FILES} files, generated in ${ms(performance.now() - started)}; ${RUNS} runs each`,
      );
      const url = `${server.baseUrl}/bench/code.git`;
      await firstAndSecond({
        server,
        bare,
        url,
        env: gitCredentialEnv(url, { username: USER, token: TOKEN }),
        work,
      });
    }
    if (ONLY.has('memory')) {
      await memory({ server, bare: '', url: '', env: {}, work });
    }
  } finally {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
