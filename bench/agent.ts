/**
 * Agent benchmark: `node bench/agent.ts [--pages 5000]`.
 *
 * On the Mintlify fixture (../shared/fixtures/mintlify-docs, when present) and
 * on a generated site of `--pages` pages, prints:
 * - the size of the first model request (characters of the JSON body and an
 *   estimate of tokens at 4 characters each), captured by the scripted
 *   OpenAI-compatible double; baseline: the same site's plain list of page
 *   paths, which a naive prompt would include;
 * - `search` and `list_files` latency (median of 9), against `grep -rn` and
 *   `find` over the same tree in the same run.
 * Targets: first request ≤ 8k tokens on 5,000 pages; search < 200 ms on 5,000 pages.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runAgent } from '../src/agent/loop.ts';
import { resolveModel } from '../src/agent/model-resolution.ts';
import { detectSite } from '../src/agent/site/detect.ts';
import { listFiles } from '../src/agent/tools/list_files.ts';
import { search } from '../src/agent/tools/search.ts';
import { DEFAULT_BUDGETS, DEFAULT_LIMITS } from '../src/agent/types.ts';
import { Workspace } from '../src/agent/workspace.ts';
import { startOpenAIServer, toolCall } from '../test/doubles/openai-server.ts';
import { FIXTURE, FIXTURE_ABSENT, generateSite } from './site.ts';

const { values: args } = parseArgs({ options: { pages: { type: 'string', default: '5000' } } });
const project = { docsDir: '.', writable: ['**/*.md', '**/*.mdx', 'docs.json'] };

function copyFixture(): string | undefined {
  if (!existsSync(FIXTURE)) return undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-fixture-'));
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
async function time(fn: () => Promise<unknown> | unknown, runs = 9): Promise<number> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

async function measure(name: string, root: string) {
  const server = await startOpenAIServer({ script: [toolCall('finish', { title: 'x', summary: 'y' })] });
  try {
    const model = resolveModel('openai-compatible/bench', { openaiCompatibleBaseUrl: server.url, env: {} });
    await runAgent(
      {
        root,
        project,
        instruction: 'Document the rate limit on the quickstart page.',
        history: [],
        budgets: DEFAULT_BUDGETS,
        limits: DEFAULT_LIMITS,
        signal: new AbortController().signal,
        emit: () => {},
      },
      model,
    );
    const first = server.requests[0]!.rawBody;
    const site = await detectSite(root, '.');
    const naive = site.pages.join('\n').length;
    const workspace = await Workspace.open(root, project, DEFAULT_LIMITS);
    const context = { root: workspace.root, signal: new AbortController().signal, workspace };
    const searchMs = await time(() =>
      search.execute({ pattern: 'rate limit', ignore_case: true } as never, context),
    );
    const listMs = await time(() => listFiles.execute({} as never, context));
    const grepMs = await time(() => {
      try {
        execFileSync('grep', ['-rni', '--include=*.md*', 'rate limit', '.'], {
          cwd: root,
          maxBuffer: 1 << 28,
        });
      } catch {}
    });
    const findMs = await time(() =>
      execFileSync('find', ['.', '-type', 'f', '-not', '-path', './.git/*'], {
        cwd: root,
        maxBuffer: 1 << 28,
      }),
    );
    return {
      name,
      pages: site.pages.length,
      chars: first.length,
      tokens: Math.ceil(first.length / 4),
      naive,
      searchMs,
      grepMs,
      listMs,
      findMs,
    };
  } finally {
    await server.close();
  }
}

const sites: [string, string | undefined][] = [
  ['mintlify fixture', copyFixture()],
  [`generated ${args.pages} pages`, generateSite(Number(args.pages))],
];
const rows = [];
for (const [name, root] of sites) {
  if (!root) {
    console.log(`${name}: skipped (${FIXTURE_ABSENT})`);
    continue;
  }
  process.stderr.write(`measuring ${name}…\n`);
  rows.push(await measure(name, root));
  rmSync(root, { recursive: true, force: true });
}
console.log('\ndocwright agent benchmark\n');
console.log(
  'site                  pages  1st request  ≈tokens  page list alone  search    grep -rn  list_files  find',
);
for (const r of rows) {
  console.log(
    [
      r.name.padEnd(20),
      String(r.pages).padStart(6),
      `${r.chars.toLocaleString()} ch`.padStart(12),
      String(r.tokens).padStart(8),
      `${r.naive.toLocaleString()} ch`.padStart(16),
      `${r.searchMs.toFixed(1)} ms`.padStart(9),
      `${r.grepMs.toFixed(1)} ms`.padStart(9),
      `${r.listMs.toFixed(1)} ms`.padStart(11),
      `${r.findMs.toFixed(1)} ms`.padStart(8),
    ].join('  '),
  );
}
const big = rows.at(-1)!;
console.log(
  `\nfirst request on ${big.pages} pages: ≈${big.tokens} tokens — target ≤ 8,000: ${big.tokens <= 8000 ? 'met' : 'MISSED'}`,
);
console.log(
  `search over ${big.pages} pages: ${big.searchMs.toFixed(1)} ms — target < 200 ms: ${big.searchMs < 200 ? 'met' : 'MISSED'}`,
);
