/**
 * Style and spelling cost on a real docs tree (SPEC §19 "Cost"): `node bench/style-spelling.ts
 * [--runs 3]`. Copies the Mintlify docs fixture (../shared/fixtures/mintlify-docs) into a git
 * repository, adds a .vale.ini with a small style and a cspell.json, changes one page, and times
 * the style and spelling checks on the head and the base — the first run in the process (cold:
 * dictionaries and rules loaded) and the next ones (warm). Prints one line per measure.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { spellingCheck } from '../src/agent/verify/spelling.ts';
import { checkoutTree, overlayTree } from '../src/agent/verify/tree.ts';
import type { Check, CheckInput } from '../src/agent/verify/types.ts';
import { valeCheck } from '../src/agent/verify/vale-check.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const FIXTURE = path.resolve(import.meta.dirname, '../../shared/fixtures/mintlify-docs');
if (!existsSync(FIXTURE)) {
  console.error(`the Mintlify fixture is missing (${FIXTURE}): nothing to measure`);
  process.exit(0);
}

const root = mkdtempSync(path.join(tmpdir(), 'docwright-bench-style-'));
try {
  cpSync(FIXTURE, root, { recursive: true, filter: (source) => !source.includes(`${path.sep}.git`) });
  mkdirSync(path.join(root, 'styles/Bench'), { recursive: true });
  writeFileSync(
    path.join(root, '.vale.ini'),
    'StylesPath = styles\n[*.{md,mdx}]\nBasedOnStyles = Vale, Bench\n',
  );
  const rules: Record<string, string> = {
    'Avoid.yml':
      'extends: existence\nmessage: "Avoid %s."\nlevel: error\nignorecase: true\ntokens: [simply, just, easy]\n',
    'Contractions.yml':
      "extends: substitution\nmessage: \"Use '%s' instead of '%s'.\"\nignorecase: true\nswap:\n  it is: it's\n  do not: don't\n",
    'Headings.yml': 'extends: capitalization\nmessage: "%s"\nscope: heading\nmatch: $sentence\n',
  };
  for (const [name, text] of Object.entries(rules))
    writeFileSync(path.join(root, 'styles/Bench', name), text);
  writeFileSync(path.join(root, 'cspell.json'), JSON.stringify({ version: '0.2', words: ['Mintlify'] }));
  const git = (...argv: string[]) =>
    execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b.invalid', ...argv], {
      cwd: root,
      stdio: 'pipe',
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  const page = 'quickstart.mdx';
  const original = readFileSync(path.join(root, page), 'utf8');
  writeFileSync(path.join(root, page), `${original}\n## A New Section\n\nIt is simply easy: do not wory.\n`);
  const changes = { changed: [page], deleted: [], moved: [] };
  const head = checkoutTree(root);
  const base = overlayTree(head, new Map([[page, original]]));
  const input = (state: 'head' | 'base'): CheckInput => ({
    tree: state === 'head' ? head : base,
    other: state === 'head' ? base : head,
    state,
    docsDir: '.',
    changes,
    signal: new AbortController().signal,
  });
  for (const make of [valeCheck, spellingCheck]) {
    for (let run = 0; run < Number(args.runs); run++) {
      const check: Check = make();
      const started = performance.now();
      const outcome = await check.run(input('head'));
      const middle = performance.now();
      await check.run(input('base'));
      const ended = performance.now();
      console.log(
        `${check.name} run ${run + 1}${run === 0 ? ' (cold)' : ''}: head ${(middle - started).toFixed(0)} ms ` +
          `(${outcome.findings.length} findings), base ${(ended - middle).toFixed(0)} ms`,
      );
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
