/**
 * Verification benchmark: `node bench/verify.ts [--pages 1000] [--runs 5] [--no-mint] [--fixture]`.
 *
 * Generates a Mintlify site of `--pages` pages in a temporary directory — navigation split into
 * one `$ref` file a tab, ~10 internal links a page (a third with an anchor), headings, an image —
 * and prints side by side: the time to read every page; the built-in checks (src/agent/verify/
 * builtin.ts) verifying a one-page change on the head and the base tree, cold (new trees, as a
 * run sees them) and the median of `--runs`; the same for a page moved (which brings every page
 * that mentions it into scope); and `npx mint broken-links --check-anchors` on the same tree when
 * that command runs here. Target (SPEC §19): a one-page change under 1 s beyond reading the pages.
 *
 * `--fixture` also runs every check over every page of the shared Mintlify fixture and prints
 * the links it reports beside those `mint broken-links --check-anchors` reports there.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { builtinChecks } from '../src/agent/verify/builtin.ts';
import { checkoutTree, overlayTree } from '../src/agent/verify/tree.ts';
import type { Finding, RunChanges } from '../src/agent/verify/types.ts';
import { FIXTURE } from './site.ts';

const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '5' },
    'no-mint': { type: 'boolean', default: false },
    fixture: { type: 'boolean', default: false },
  },
});

const TABS = 10;

/** A generated site: page `i` is `tab{i % 10}/page-{i}.mdx`, its tab's navigation in `nav/tab{t}.json`. */
function generate(pages: number): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-verify-'));
  const ref = (i: number) => `tab${i % TABS}/page-${i}`;
  mkdirSync(path.join(dir, 'nav'));
  mkdirSync(path.join(dir, 'images'));
  writeFileSync(path.join(dir, 'images/diagram.png'), 'png');
  for (let t = 0; t < TABS; t++) {
    mkdirSync(path.join(dir, `tab${t}`));
    const mine = Array.from({ length: pages }, (_, i) => i).filter((i) => i % TABS === t);
    const groups = [];
    for (let g = 0; g < mine.length; g += 20)
      groups.push({ group: `Group ${g / 20}`, pages: mine.slice(g, g + 20).map(ref) });
    writeFileSync(path.join(dir, `nav/tab${t}.json`), JSON.stringify({ tab: `Tab ${t}`, groups }, null, 2));
  }
  const navigation = { tabs: Array.from({ length: TABS }, (_, t) => ({ $ref: `./nav/tab${t}.json` })) };
  const config = {
    $schema: 'https://mintlify.com/docs.json',
    theme: 'mint',
    name: 'Bench',
    colors: { primary: '#166E3F' },
    navigation,
  };
  writeFileSync(path.join(dir, 'docs.json'), JSON.stringify(config, null, 2));
  for (let i = 0; i < pages; i++) writeFileSync(path.join(dir, `${ref(i)}.mdx`), pageText(i, pages, ref));
  return dir;
}

function pageText(i: number, pages: number, ref: (i: number) => string): string {
  const lines = [`---\ntitle: "Page ${i}"\ndescription: "What page ${i} covers."\n---\n`];
  for (let s = 0; s < 5; s++) {
    lines.push(`## Section ${s} of page ${i}\n`);
    for (let l = 0; l < 2; l++) {
      const k = s * 2 + l;
      const target = (i * 7 + k * 13 + 1) % pages;
      const anchor = k % 3 === 0 ? `#section-${k % 5}-of-page-${target}` : '';
      lines.push(
        `Line ${k} of page ${i} explains option_${k}; see [page ${target}](/${ref(target)}${anchor}).\n`,
      );
    }
  }
  lines.push(
    '<Card title="Next" href="/tab0/page-0">Start here.</Card>\n\n![Diagram](/images/diagram.png)\n',
  );
  return lines.join('\n');
}

const ms = (t: number) => `${t.toFixed(0).padStart(6)} ms`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function readAllPages(root: string): Promise<number> {
  const tree = checkoutTree(root);
  const start = performance.now();
  const files = (await tree.listFiles('.')).filter((f) => /\.mdx?$/.test(f));
  // 32 at a time, as the checks read them.
  for (let i = 0; i < files.length; i += 32)
    await Promise.all(files.slice(i, i + 32).map((f) => tree.readText(f)));
  return performance.now() - start;
}

/** Runs every built-in check on fresh head and base trees; returns the time and the head's findings. */
async function verifyOnce(root: string, originals: Map<string, string | null>, changes: RunChanges) {
  const head = checkoutTree(root);
  const base = overlayTree(head, originals);
  const signal = new AbortController().signal;
  const findings: Finding[] = [];
  const start = performance.now();
  for (const check of builtinChecks()) {
    findings.push(
      ...(await check.run({ tree: head, other: base, state: 'head', docsDir: '.', changes, signal }))
        .findings,
    );
    await check.run({ tree: base, other: head, state: 'base', docsDir: '.', changes, signal });
  }
  return { time: performance.now() - start, findings };
}

async function timeVerify(
  label: string,
  root: string,
  originals: Map<string, string | null>,
  changes: RunChanges,
  reading: number,
) {
  const runs: number[] = [];
  let findings: Finding[] = [];
  for (let r = 0; r < Number(args.runs); r++) {
    const once = await verifyOnce(root, originals, changes);
    runs.push(once.time);
    findings = once.findings;
  }
  const beyond = reading > 0 ? `   beyond reading ≈ ${ms(Math.max(0, median(runs) - reading))}` : '';
  console.log(
    `${label.padEnd(44)} cold ${ms(runs[0]!)}   median ${ms(median(runs))}${beyond}   findings ${findings.length}`,
  );
}

function mintCheck(root: string): string {
  if (args['no-mint']) return 'skipped (--no-mint)';
  const start = performance.now();
  try {
    const out = execFileSync('npx', ['-y', 'mint', 'broken-links', '--check-anchors'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 600_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return `${ms(performance.now() - start)}   ${/found \d+ broken links?[^\n]*|no broken links found/i.exec(out)?.[0] ?? out.trim().slice(-80)}`;
  } catch (error) {
    const e = error as { stdout?: string; status?: number };
    if (e.status === 1 && e.stdout?.includes('broken'))
      return `${ms(performance.now() - start)}   (exit 1) ${/found \d+ broken links?/.exec(e.stdout)?.[0] ?? ''}`;
    return `unavailable (${String((error as Error).message)
      .split('\n')[0]!
      .slice(0, 100)})`;
  }
}

async function generated(): Promise<void> {
  const pages = Number(args.pages);
  const root = generate(pages);
  try {
    console.log(
      `Generated site: ${pages} pages, ${TABS} $ref navigation files, ~11 links a page, in ${root}`,
    );
    await readAllPages(root); // warm the file cache and the parser's modules: neither is the checks'
    await verifyOnce(root, new Map(), { changed: [], deleted: [], moved: [] });
    const reads = [];
    for (let r = 0; r < Number(args.runs); r++) reads.push(await readAllPages(root));
    console.log(`${'read every page'.padEnd(44)} cold ${ms(reads[0]!)}   median ${ms(median(reads))}`);
    const edited = 'tab3/page-3.mdx';
    const original = readFileSync(path.join(root, edited), 'utf8');
    writeFileSync(
      path.join(root, edited),
      `${original}\nSee also [page 5](/tab5/page-5#section-1-of-page-5).\n`,
    );
    await timeVerify(
      'verify a one-page change (head + base)',
      root,
      new Map([[edited, original]]),
      {
        changed: [edited],
        deleted: [],
        moved: [],
      },
      0,
    );
    writeFileSync(path.join(root, edited), original);
    const moved = { from: 'tab4/page-4.mdx', to: 'tab4/page-4-renamed.mdx' };
    const movedText = readFileSync(path.join(root, moved.from), 'utf8');
    renameSync(path.join(root, moved.from), path.join(root, moved.to));
    await timeVerify(
      'verify a page moved (all mentions in scope)',
      root,
      new Map([
        [moved.from, movedText],
        [moved.to, null],
      ]),
      { changed: [moved.to], deleted: [moved.from], moved: [moved] },
      // A move reads every page on both trees to find the pages that mention it.
      2 * median(reads),
    );
    renameSync(path.join(root, moved.to), path.join(root, moved.from));
    console.log(`${'npx mint broken-links --check-anchors'.padEnd(44)} ${mintCheck(root)}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Every page of the fixture in scope: the links our checks report beside mint's. */
async function fixture(): Promise<void> {
  if (!existsSync(FIXTURE)) {
    console.log(
      `--fixture: ${FIXTURE} is absent (the shared fixtures are not beside this checkout): skipped`,
    );
    return;
  }
  const root = mkdtempSync(path.join(tmpdir(), 'docwright-bench-verify-fixture-'));
  try {
    cpSync(FIXTURE, root, { recursive: true });
    const tree = checkoutTree(root);
    const pages = (await tree.listFiles('.')).filter((f) => /\.mdx?$/.test(f) && !/^[A-Z]+\.md$/.test(f));
    const nothing = await verifyOnce(root, new Map(), { changed: [], deleted: [], moved: [] });
    console.log(`fixture, a run that changed nothing: ${nothing.findings.length} findings`);
    const all = await verifyOnce(root, new Map(), { changed: pages, deleted: [], moved: [] });
    const byRule = new Map<string, number>();
    for (const f of all.findings) byRule.set(f.rule, (byRule.get(f.rule) ?? 0) + 1);
    console.log(
      `fixture, every page in scope (${pages.length}): ${ms(all.time)}, findings by rule: ${JSON.stringify(Object.fromEntries(byRule))}`,
    );
    for (const f of all.findings.filter((x) => x.rule === 'links'))
      console.log(`  ${f.path}:${f.line} ${f.message}`);
    console.log(`npx mint broken-links --check-anchors on the fixture: ${mintCheck(root)}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await generated();
if (args.fixture) await fixture();
