/** Docs sites the benchmarks run on: the Mintlify fixture, and generated sites of any size. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The real 317-page Mintlify site some benchmarks also run on: `mintlify-docs` of the shared
 * fixtures beside the checkout (`../shared/fixtures`), or of `DOCWRIGHT_FIXTURES_DIR`. It is not
 * part of the repository (too large, another licence): a benchmark without it says so and runs
 * its other cases. Tests never need it (they generate their sites: test/helpers/mintlify-site.ts).
 */
export const FIXTURE = path.join(
  process.env.DOCWRIGHT_FIXTURES_DIR
    ? path.resolve(process.env.DOCWRIGHT_FIXTURES_DIR)
    : path.resolve(import.meta.dirname, '../../shared/fixtures'),
  'mintlify-docs',
);

/** What a benchmark prints when `FIXTURE` is absent. */
export const FIXTURE_ABSENT = `${FIXTURE} is absent: put the shared fixtures beside the checkout (../shared/fixtures) or set DOCWRIGHT_FIXTURES_DIR`;

/**
 * A Mintlify site of `pages` pages in a new temporary directory: 10 tabs × groups of 20,
 * realistic page bodies. Page `i` is `tab{i % 10}/group{⌊i / 200⌋}/page-{i}.mdx`; its line
 * `l` reads "Line l of page i explains option_l and the rate limit."
 */
export function generateSite(pages: number): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-site-'));
  const tabs: { tab: string; groups: { group: string; pages: string[] }[] }[] = [];
  for (let i = 0; i < pages; i++) {
    const tab = i % 10;
    const group = Math.floor(i / 200);
    const ref = `tab${tab}/group${group}/page-${i}`;
    mkdirSync(path.join(dir, `tab${tab}/group${group}`), { recursive: true });
    const body = Array.from(
      { length: 40 },
      (_, l) => `Line ${l} of page ${i} explains option_${l} and the rate limit.`,
    ).join('\n');
    writeFileSync(path.join(dir, `${ref}.mdx`), `---\ntitle: "Page ${i}"\n---\n\n${body}\n`);
    tabs[tab] ??= { tab: `Tab ${tab}`, groups: [] };
    let g = tabs[tab].groups.find((x) => x.group === `Group ${group}`);
    if (!g) {
      g = { group: `Group ${group}`, pages: [] };
      tabs[tab].groups.push(g);
    }
    g.pages.push(ref);
  }
  writeFileSync(
    path.join(dir, 'docs.json'),
    JSON.stringify({ name: 'Bench', navigation: { tabs } }, null, 2),
  );
  return dir;
}

/** What `generateMonorepo` made: the edit a benchmark job makes is on `docs/guides/page-0.mdx`. */
export interface Monorepo {
  codeFiles: number;
  pages: number;
  commits: number;
}

const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

/** One commit of a fast-import stream on `refs/heads/main`. */
function fastImportCommit(
  mark: number,
  message: string,
  files: [path: string, content: string][],
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

const codeFile = (i: number, revision = 0) =>
  [
    `src/pkg${Math.floor(i / 10_000)}/mod${Math.floor(i / 100) % 100}/file-${i}.ts`,
    `// Module ${i}, revision ${revision}.\nexport const value${i} = ${i * 7 + revision};\nexport function f${i}(x: number): number {\n  return x + value${i};\n}\n`,
  ] as [string, string];

const docPage = (i: number, revision = 0) =>
  [
    `docs/guides/page-${i}.mdx`,
    `---\ntitle: "Guide ${i}"\n---\n\n${Array.from({ length: 40 }, (_, l) => `Line ${l} of guide ${i} explains option_${l} and the rate limit.`).join('\n')}\n${revision ? `\nRevised ${revision} times.\n` : ''}`,
  ] as [string, string];

/**
 * A monorepo written straight into the bare repository `bare` with `git fast-import` (no working
 * tree: creating 100,000 files on a slow disk would take minutes): `codeFiles` source files under
 * `src/`, a Mintlify site of `pages` pages under `docs/` (docs/docs.json), and `commits` commits
 * of history, each after the first changing a few source files and a page.
 */
export function generateMonorepo(bare: string, options: Monorepo): void {
  const chunks: string[] = [];
  const files: [string, string][] = [
    ['README.md', '# Monorepo\n'],
    ['package.json', '{"name": "monorepo", "private": true}\n'],
  ];
  for (let i = 0; i < options.codeFiles; i++) files.push(codeFile(i));
  const refs: string[] = [];
  for (let i = 0; i < options.pages; i++) {
    files.push(docPage(i));
    refs.push(`guides/page-${i}`);
  }
  files.push([
    'docs/docs.json',
    `${JSON.stringify({ name: 'Monorepo docs', navigation: { groups: [{ group: 'Guides', pages: refs }] } }, null, 2)}\n`,
  ]);
  const start = 1_700_000_000;
  chunks.push(fastImportCommit(1, 'Initial import', files, start));
  for (let c = 2; c <= options.commits; c++)
    chunks.push(fastImportCommit(c, `Change ${c}`, changeSet(c, options), start + c * 60, `:${c - 1}`));
  execFileSync('git', ['fast-import', '--quiet'], {
    cwd: bare,
    input: chunks.join(''),
    env: gitEnv,
    maxBuffer: 1 << 30,
  });
}

/** What upstream commit `n` changes: five source files and one page (not page 0, which jobs edit). */
function changeSet(n: number, options: Monorepo): [string, string][] {
  const files = Array.from({ length: 5 }, (_, k) =>
    codeFile((n * 7919 + k * 104_729) % options.codeFiles, n),
  );
  files.push(docPage(1 + (n % (options.pages - 1)), n));
  return files;
}

/** Adds upstream commit `n` on `main` of the bare repository (work landing between two jobs). */
export function addUpstreamCommit(bare: string, n: number, options: Monorepo): void {
  const head = execFileSync('git', ['rev-parse', 'refs/heads/main'], {
    cwd: bare,
    env: gitEnv,
    encoding: 'utf8',
  }).trim();
  const stream = fastImportCommit(1, `Upstream change ${n}`, changeSet(n, options), 1_800_000_000 + n, head);
  execFileSync('git', ['fast-import', '--quiet'], { cwd: bare, input: stream, env: gitEnv });
}
