/**
 * Verification cost on Sphinx and MkDocs sites (SPEC §19: a one-page change of a 1,000-page site
 * verified in under 1 s beyond reading the pages): `node bench/verify-sphinx-mkdocs.ts [--pages 1000]
 * [--runs 3]`.
 *
 * Generates each site (Sphinx: sections with glob toctrees, ~10 `:doc:`/`:ref:` a page, an image;
 * MkDocs: a nav of every page, ~10 relative links with anchors a page), changes one page, and
 * times, per run on fresh trees: reading every page of head and base once (what any check needs at
 * least), then the site's `navigation` and `links` checks on head and base — wall clock and CPU
 * time, since on a shared machine the wall clock of file reads varies several-fold.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { mkdocsChecks } from '../src/agent/verify/mkdocs-checks.ts';
import { sphinxChecks } from '../src/agent/verify/sphinx-checks.ts';
import { checkoutTree, overlayTree } from '../src/agent/verify/tree.ts';
import type { Check } from '../src/agent/verify/types.ts';

const { values: args } = parseArgs({
  options: { pages: { type: 'string', default: '1000' }, runs: { type: 'string', default: '3' } },
});
const PAGES = Number(args.pages);
const RUNS = Number(args.runs);
const SECTIONS = 20;
const perSection = Math.ceil(PAGES / SECTIONS);

function write(root: string, file: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
}

function sphinxSite(root: string): string {
  write(root, 'docs/conf.py', "extensions = ['sphinx.ext.autosectionlabel']\n");
  const sections = Array.from({ length: SECTIONS }, (_, s) => `   s${s}/index`).join('\n');
  write(root, 'docs/index.rst', `Home\n====\n\n.. toctree::\n\n${sections}\n`);
  write(root, 'docs/img.png', 'png');
  for (let s = 0; s < SECTIONS; s++) {
    write(root, `docs/s${s}/index.rst`, `S${s}\n===\n\n.. toctree::\n   :glob:\n\n   *\n`);
    for (let p = 0; p < perSection; p++) {
      const refs = Array.from(
        { length: 5 },
        (_, k) =>
          `See :doc:\`/s${(s + k) % SECTIONS}/p${(p + k) % perSection}\` and :ref:\`label-${(s + k) % SECTIONS}-${p}\`.`,
      ).join('\n');
      write(
        root,
        `docs/s${s}/p${p}.rst`,
        `.. _label-${s}-${p}:\n\nPage ${s} ${p}\n===========\n\n${refs}\n\n.. image:: /img.png\n`,
      );
    }
  }
  return 'docs/s3/p7.rst';
}

function mkdocsSite(root: string): string {
  const nav: string[] = [];
  for (let s = 0; s < SECTIONS; s++) {
    nav.push(`  - Section ${s}:`);
    for (let p = 0; p < perSection; p++) {
      nav.push(`      - s${s}/p${p}.md`);
      const links = Array.from(
        { length: 10 },
        (_, k) => `See [page](../s${(s + k) % SECTIONS}/p${(p + k) % perSection}.md#part-${k}).`,
      ).join('\n');
      const parts = Array.from({ length: 10 }, (_, k) => `## Part ${k}\n\nText.`).join('\n\n');
      write(root, `docs/s${s}/p${p}.md`, `# Page ${s} ${p}\n\n${links}\n\n${parts}\n`);
    }
  }
  write(root, 'mkdocs.yml', `site_name: Bench\nnav:\n${nav.join('\n')}\n`);
  return 'docs/s3/p7.md';
}

const cpuMs = (usage: NodeJS.CpuUsage) => Math.round((usage.user + usage.system) / 1000);

async function measure(name: string, build: (root: string) => string, checks: Check[]): Promise<void> {
  for (let run = 0; run < RUNS; run++) {
    const root = mkdtempSync(path.join(tmpdir(), 'docwright-bench-verify-'));
    try {
      const page = build(root);
      const head = checkoutTree(root);
      const original = `${(await head.readText(page))!}\nOld last line.\n`;
      const base = overlayTree(head, new Map([[page, original]]));
      const changes = { changed: [page], deleted: [], moved: [] };
      const readStart = performance.now();
      const readCpu = process.cpuUsage();
      for (const tree of [head, base]) for (const f of await tree.listFiles('docs')) await tree.readText(f);
      const reading = performance.now() - readStart;
      const readingCpu = cpuMs(process.cpuUsage(readCpu));
      // Fresh trees, so that the checks read the pages themselves.
      const freshHead = checkoutTree(root);
      const freshBase = overlayTree(freshHead, new Map([[page, original]]));
      const start = performance.now();
      const startCpu = process.cpuUsage();
      let findings = 0;
      for (const [tree, other, state] of [
        [freshHead, freshBase, 'head'],
        [freshBase, freshHead, 'base'],
      ] as const) {
        for (const check of checks) {
          const outcome = await check.run({
            tree,
            other,
            state,
            docsDir: '.',
            changes,
            signal: AbortSignal.timeout(600_000),
          });
          findings += outcome.findings.length;
        }
      }
      const checking = performance.now() - start;
      const checkingCpu = cpuMs(process.cpuUsage(startCpu));
      console.log(
        `${name} ${PAGES} pages, run ${run + 1}: reading every page of both trees ${reading.toFixed(0)} ms (CPU ${readingCpu} ms); both checks on both trees ${checking.toFixed(0)} ms (CPU ${checkingCpu} ms); ${findings} findings`,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
}

await measure('Sphinx', sphinxSite, sphinxChecks());
await measure('MkDocs', mkdocsSite, mkdocsChecks());
