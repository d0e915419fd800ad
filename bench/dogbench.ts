/**
 * DogBench benchmark: `node bench/dogbench.ts [--runs 3] [--concurrency 4]`.
 *
 * `docwright eval --dogbench` over five items in DogBench's format (written here, in the shape of
 * DogBench's five-item sample: a Markdown site, a Sphinx site, an MkDocs site, a `docs_src`
 * example in the code's repository, and an item that needs no change), run as a user runs it — a
 * real process against the scripted agent and judge — and prints per run the wall-clock time, the
 * peak memory of the whole process tree (the CLI, its worker and its agent processes, sampled every
 * 50 ms from /proc) and of its largest process (what `/usr/bin/time` reports as maximum resident
 * size). Targets (issue 37): under 60 s and under 500 MB.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startOpenAIServer, toolCall } from '../test/doubles/openai-server.ts';
import { taskModel } from '../test/doubles/task-model.ts';
import { repository } from '../test/helpers/git-history.ts';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '4' } },
});
const BIN = path.resolve(import.meta.dirname, '../bin/docwright.js');

const rubric = (quote: string) =>
  `### C1 — The change is documented\n**Priority:** P0 | **Category:** completeness | **Scoring:** requirement\nThe patch says \`${quote}\`.\n`;

/** Five items and their clones in `dir`; returns the scripted agent's plans and the judge's quotes. */
function dataset(dir: string) {
  const [codeBase, codeHead] = repository(path.join(dir, 'repos', 'acme', 'service'), [
    { files: { 'client.py': 'TIMEOUT = 10\n' } },
    {
      files: { 'client.py': 'TIMEOUT = 10\nRETRIES = 3\n' },
      message: 'Add retries (#7)\n\nRetries failed calls.',
    },
  ]) as [string, string];
  const code = (url: string) => ({
    source_url: url,
    repo_url: 'https://github.com/acme/service',
    base_sha: codeBase,
    head_sha: codeHead,
    paths: ['client.py'],
  });
  const site = (name: string, files: Record<string, string>) =>
    repository(path.join(dir, 'repos', 'acme', name), [{ files }])[0]!;
  const md = site('md-docs', { 'docs/config.md': '# Configuration\n\n`timeout`: seconds.\n' });
  const sphinx = site('sphinx-docs', {
    'docs/conf.py': "project = 'acme'\n",
    'docs/index.rst': 'Acme\n====\n\n.. toctree::\n\n   config\n',
    'docs/config.rst': 'Configuration\n=============\n\n``timeout``: seconds.\n',
  });
  const mkdocs = site('mkdocs-docs', {
    'mkdocs.yml': 'site_name: Acme\nnav:\n  - Home: index.md\n',
    'docs/index.md': '# Acme\n\n`timeout`: seconds.\n',
  });
  const [monoBase, monoHead] = repository(path.join(dir, 'repos', 'acme', 'mono'), [
    { files: { 'app/main.py': 'def items(): ...\n', 'docs_src/tutorial.py': 'items()\n' } },
    { files: { 'app/main.py': 'def items(limit=100): ...\n' }, message: 'Add a limit (#9)' },
  ]) as [string, string];
  const docs = (name: string, base: string) => ({
    repo_url: `https://github.com/acme/${name}`,
    base_sha: base,
    head_sha: null,
    paths: [],
  });
  const items = [
    {
      instance_id: 'md-retries',
      source_url: 'u1',
      context: 'ITEM-MD',
      docs: docs('md-docs', md),
      code: code('https://github.com/acme/service/pull/1'),
    },
    {
      instance_id: 'sphinx-retries',
      source_url: 'u2',
      context: 'ITEM-SPHINX',
      docs: docs('sphinx-docs', sphinx),
      code: code('https://github.com/acme/service/pull/2'),
    },
    {
      instance_id: 'mkdocs-retries',
      source_url: 'u3',
      context: 'ITEM-MKDOCS',
      docs: docs('mkdocs-docs', mkdocs),
      code: code('https://github.com/acme/service/pull/3'),
    },
    {
      instance_id: 'mono-example',
      source_url: 'u4',
      context: 'ITEM-MONO',
      docs: docs('mono', monoBase),
      code: {
        ...code('https://github.com/acme/mono/pull/9'),
        repo_url: 'https://github.com/acme/mono',
        base_sha: monoBase,
        head_sha: monoHead,
        paths: ['app/main.py'],
      },
    },
    {
      instance_id: 'internal',
      source_url: 'u5',
      context: 'ITEM-ABSTAIN',
      docs: docs('md-docs', md),
      code: code('https://github.com/acme/service/pull/5'),
    },
  ];
  const quotes: Record<string, string> = {
    'md-retries': '`retries`: attempts.',
    'sphinx-retries': '``retries``: attempts.',
    'mkdocs-retries': '`retries`: attempts.',
    'mono-example': 'items(limit=10)',
  };
  writeFileSync(path.join(dir, 'items.jsonl'), `${items.map((i) => JSON.stringify(i)).join('\n')}\n`);
  const rows = items.map((i) => ({
    instance_id: i.instance_id,
    expected_decision: i.instance_id === 'internal' ? 'abstain' : 'patch',
    rubric: quotes[i.instance_id] ? rubric(quotes[i.instance_id]!) : null,
  }));
  writeFileSync(path.join(dir, 'rubrics.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const edit = (file: string, old: string, add: string) => [
    toolCall('read_file', { path: file }),
    toolCall('edit_file', { path: file, old_string: old, new_string: `${old}${add}` }),
    toolCall('finish', { title: 'Document it', summary: 'Done.' }),
  ];
  const plans = [
    { match: 'ITEM-MD', steps: edit('docs/config.md', '`timeout`: seconds.\n', '\n`retries`: attempts.\n') },
    {
      match: 'ITEM-SPHINX',
      steps: edit('docs/config.rst', '``timeout``: seconds.\n', '\n``retries``: attempts.\n'),
    },
    {
      match: 'ITEM-MKDOCS',
      steps: edit('docs/index.md', '`timeout`: seconds.\n', '\n`retries`: attempts.\n'),
    },
    { match: 'ITEM-MONO', steps: edit('docs_src/tutorial.py', 'items()\n', 'items(limit=10)\n') },
    { match: 'ITEM-ABSTAIN', steps: [toolCall('finish', { title: 'Nothing', summary: 'Internal only.' })] },
  ];
  return { plans, quotes };
}

/** The resident memory of a process and its descendants, in bytes (Linux /proc): in all, and the largest one. */
function treeRss(root: number): { total: number; largest: number } {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(entry);
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
      rss.set(pid, Number(fields[21]) * 4096);
    } catch {
      // The process ended while being read.
    }
  }
  let total = 0;
  let largest = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    total += rss.get(pid) ?? 0;
    largest = Math.max(largest, rss.get(pid) ?? 0);
    stack.push(...(children.get(pid) ?? []));
  }
  return { total, largest };
}

const dir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-dogbench-'));
const { plans, quotes } = dataset(dir);
const judge = (prompt: string) => {
  const id = /CELL: (\S+)/.exec(prompt)?.[1] ?? '';
  const base = { triggering_patch_quote: null, contradicting_patch_quote: null, missing_requirement: null };
  const row = {
    ...base,
    id: 'C1',
    scoring_type: 'requirement',
    triggered: null,
    verdict: 'pass',
    violated: null,
  };
  return { criteria: [{ ...row, supporting_patch_quote: quotes[id] ?? null, reason: 'ok' }], summary: 'ok' };
};
const model = await startOpenAIServer({ fallback: taskModel(plans, { dogbenchJudge: judge }) });
try {
  for (let run = 1; run <= Number(args.runs); run++) {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        BIN,
        'eval',
        '--dogbench',
        dir,
        '--model',
        'openai-compatible/agent',
        '--judge',
        'openai-compatible/judge',
        '--concurrency',
        args.concurrency,
        '--json',
      ],
      {
        env: {
          ...process.env,
          DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url,
          DOCWRIGHT_LOG_LEVEL: 'error',
        },
      },
    );
    let peak = 0;
    let largest = 0;
    const sampler = setInterval(() => {
      const now = treeRss(child.pid!);
      peak = Math.max(peak, now.total);
      largest = Math.max(largest, now.largest);
    }, 50);
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`docwright eval exited ${code}`);
    const doc = JSON.parse(stdout) as {
      tasks: { instance_id: string; overall: number }[];
      summary: { composite_score: number };
    };
    console.log(
      `run ${run}: ${doc.tasks.length} items in ${seconds.toFixed(1)} s (target < 60), peak ${(peak / 1024 / 1024).toFixed(0)} MB over the process tree, ${(largest / 1024 / 1024).toFixed(0)} MB its largest process (target < 500); composite ${doc.summary.composite_score}; ${doc.tasks.map((t) => `${t.instance_id} ${t.overall}`).join(', ')}`,
    );
  }
} finally {
  await model.close();
  rmSync(dir, { recursive: true, force: true });
}
