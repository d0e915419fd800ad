/**
 * Edit robustness (docs/evaluation.mdx): `node bench/edit-robustness.ts [--per-kind 24] [--seed 27]
 * [--baseline REF|none] [--verbose]`.
 *
 * Takes correct edits of real pages of the Mintlify fixture, perturbs each the way weaker models
 * slip (bench/edit-cases.ts), runs the real edit_file tool on a real workspace, and classifies
 * every call: applied as intended (the page equals the correct edit's result), refused with a
 * message that names the fix, refused without naming it, or applied wrongly. Beside it, the
 * same cases through the edit_file of `--baseline` (default: the commit before this work),
 * loaded from git as it was.
 * Targets: 0 applied wrongly; ≥ 90% of whitespace-class perturbations applied as intended;
 * every refusal names its fix.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { editFile } from '../src/agent/tools/edit_file.ts';
import { readFile, runTool } from '../src/agent/tools/index.ts';
import type { AgentTool } from '../src/agent/tools/tool.ts';
import { DEFAULT_LIMITS, ToolError } from '../src/agent/types.ts';
import { Workspace } from '../src/agent/workspace.ts';
import { type EditCase, KINDS, type Kind, makeCases, type Page, WHITESPACE_KINDS } from './edit-cases.ts';
import { FIXTURE, FIXTURE_ABSENT } from './site.ts';

/** The last commit whose edit_file had only the line-ending and trailing-space fallbacks. */
const BASELINE_REF = '5c3376631f6aea256aba932e115b80cc7e72dd2b';

const { values: args } = parseArgs({
  options: {
    'per-kind': { type: 'string', default: '24' },
    seed: { type: 'string', default: '27' },
    baseline: { type: 'string', default: BASELINE_REF },
    verbose: { type: 'boolean', default: false },
  },
});

type Outcome = 'intended' | 'refused, fix named' | 'refused, fix not named' | 'applied wrongly';
const OUTCOMES: Outcome[] = ['intended', 'refused, fix named', 'refused, fix not named', 'applied wrongly'];

/** What a refusal must say for each kind to count as naming the fix. */
const FIX: Record<Kind | 'ambiguous', RegExp> = {
  ambiguous: /surrounding lines|replace_all/i,
  'indentation drift': /copy .*indentation|indentation exactly/i,
  'trailing whitespace': /copy the text exactly|copy old_string .*exactly/i,
  'CRLF/LF': /copy the text exactly|copy old_string .*exactly/i,
  'tabs/spaces': /copy .*indentation|indentation exactly/i,
  'typographic quotes': /copy the text exactly|copy old_string .*exactly/i,
  'Unicode normalisation': /copy the text exactly|copy old_string .*exactly/i,
  'stale old_string':
    /(earlier edit|before your).*read the file again|read the file again.*(earlier|changed)/is,
  'path case': /exactly as list_files shows|did you mean/i,
  'leading ./': /exactly as list_files shows|did you mean/i,
};

function pagesOf(root: string): Page[] {
  return (readdirSync(root, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.mdx') && !f.split(path.sep).some((part) => part.startsWith('.')))
    .sort()
    .map((f) => ({ path: f.split(path.sep).join('/'), text: readFileSync(path.join(root, f), 'utf8') }));
}

/**
 * The baseline's edit_file, as it was at `ref`: its file and its helpers written to a
 * temporary folder, their imports of the rest of the code pointed at this checkout.
 */
async function loadBaseline(ref: string, scratch: string): Promise<AgentTool | null> {
  const repo = path.resolve(import.meta.dirname, '..');
  const own = ['edit_file.ts', 'shared.ts'];
  const dir = path.join(scratch, 'baseline');
  mkdirSync(dir, { recursive: true });
  try {
    for (const name of own) {
      let source = execFileSync('git', ['show', `${ref}:src/agent/tools/${name}`], {
        cwd: repo,
        encoding: 'utf8',
      });
      source = source.replace(/from '([^']+)'/g, (_, spec: string) => {
        if (spec.startsWith('./') && own.includes(spec.slice(2))) return `from '${spec}'`;
        const target = spec.startsWith('.')
          ? pathToFileURL(path.resolve(repo, 'src/agent/tools', spec)).href
          : import.meta.resolve(spec);
        return `from '${target}'`;
      });
      writeFileSync(path.join(dir, name), source);
    }
    const module = (await import(pathToFileURL(path.join(dir, 'edit_file.ts')).href)) as {
      editFile: AgentTool;
    };
    return module.editFile;
  } catch (error) {
    console.log(`baseline ${ref}: unavailable (${(error as Error).message.split('\n')[0]})`);
    return null;
  }
}

/** How the tool took the case; null when the case could not be set up (an earlier edit refused). */
async function runCase(
  tool: AgentTool,
  c: EditCase,
  root: string,
): Promise<{ outcome: Outcome | null; detail: string }> {
  const file = path.join(root, c.page);
  writeFileSync(file, c.before);
  if (c.sibling) writeFileSync(path.join(root, c.sibling), c.before);
  try {
    const workspace = await Workspace.open(root, { docsDir: '.', writable: ['**/*.mdx'] }, DEFAULT_LIMITS);
    const context = { root: workspace.root, signal: new AbortController().signal, workspace };
    await runTool(readFile, { path: c.page }, context);
    try {
      for (const earlier of c.earlier) await runTool(tool, { path: c.page, ...earlier }, context);
    } catch (error) {
      return { outcome: null, detail: `the earlier edit was refused: ${(error as Error).message}` };
    }
    const before = readFileSync(file, 'utf8');
    try {
      const output = await runTool(tool, c.input, context);
      const after = readFileSync(file, 'utf8');
      if (c.expected !== null && after === c.expected) return { outcome: 'intended', detail: output };
      return { outcome: 'applied wrongly', detail: `${output}\n${describe(c, after)}` };
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      if (readFileSync(file, 'utf8') !== before) return { outcome: 'applied wrongly', detail: error.message };
      const named = FIX[c.kind].test(error.message) || FIX.ambiguous.test(error.message);
      return { outcome: named ? 'refused, fix named' : 'refused, fix not named', detail: error.message };
    }
  } finally {
    writeFileSync(file, c.before);
    if (c.sibling) rmSync(path.join(root, c.sibling), { force: true });
  }
}

/** The call, and where the page differs from the correct edit's result (for --verbose). */
function describe(c: EditCase, after: string): string {
  const out = [
    `old_string: ${JSON.stringify(c.input.old_string)}`,
    `new_string: ${JSON.stringify(c.input.new_string)}`,
  ];
  if (c.expected !== null) {
    const want = c.expected.split('\n');
    const got = after.split('\n');
    const at = want.findIndex((line, i) => line !== got[i]);
    out.push(`line ${at + 1}: expected ${JSON.stringify(want[at])}, got ${JSON.stringify(got[at])}`);
  }
  return out.join('\n');
}

type Table = Map<Kind, Record<Outcome, number>>;

async function measure(tool: AgentTool, cases: EditCase[], root: string, label: string): Promise<Table> {
  const table: Table = new Map(
    KINDS.map((k) => [k, Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>]),
  );
  for (const [i, c] of cases.entries()) {
    const { outcome, detail } = await runCase(tool, c, root);
    if (outcome === null) {
      console.log(`[${label}] ${c.kind} on ${c.page} not run: ${detail.split('\n')[0]}`);
      continue;
    }
    table.get(c.kind)![outcome]++;
    if (args.verbose && outcome !== 'intended' && (outcome !== 'refused, fix named' || c.expected !== null)) {
      console.log(`\n[${label}] ${c.kind} (${c.variant}) on ${c.page}: ${outcome}\n${detail.slice(-1500)}`);
    }
    if (process.stderr.isTTY && (i + 1) % 50 === 0) {
      process.stderr.write(`  ${label}: ${i + 1}/${cases.length} cases\r`);
    }
  }
  if (process.stderr.isTTY) process.stderr.write(`${' '.repeat(40)}\r`);
  return table;
}

const percent = (n: number, of: number) => (of === 0 ? '–' : `${((100 * n) / of).toFixed(0)}%`);

function print(cases: EditCase[], current: Table, baseline: Table | null): void {
  const short = ['intended', 'refused+fix', 'refused', 'wrong'];
  const head = (label: string) => `${label.padEnd(11)}${short.map((s) => s.padStart(12)).join('')}`;
  console.log(
    `\n${'kind'.padEnd(24)}${'cases'.padStart(6)}   ${head('edit_file')}${baseline ? `   ${head('baseline')}` : ''}`,
  );
  const row = (t: Record<Outcome, number>) => OUTCOMES.map((o) => String(t[o]).padStart(12)).join('');
  const total = (t: Table, kinds: readonly Kind[]) => {
    const sum = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
    for (const k of kinds) for (const o of OUTCOMES) sum[o] += t.get(k)![o];
    return sum;
  };
  const runs = (t: Table, kinds: readonly Kind[]) => OUTCOMES.reduce((n, o) => n + total(t, kinds)[o], 0);
  const count = (kinds: readonly Kind[]) => runs(current, kinds);
  for (const kind of KINDS) {
    console.log(
      `${kind.padEnd(24)}${String(count([kind])).padStart(6)}   ${''.padEnd(11)}${row(current.get(kind)!)}${baseline ? `   ${''.padEnd(11)}${row(baseline.get(kind)!)}` : ''}`,
    );
  }
  const all = total(current, KINDS);
  console.log(
    `${'all'.padEnd(24)}${String(count(KINDS)).padStart(6)}   ${''.padEnd(11)}${row(all)}${baseline ? `   ${''.padEnd(11)}${row(total(baseline, KINDS))}` : ''}`,
  );
  const notRun = cases.length - runs(current, KINDS);
  if (notRun > 0) console.log(`(${notRun} cases not run: their earlier edit was refused)`);
  const ws = total(current, WHITESPACE_KINDS);
  const wsCount = count(WHITESPACE_KINDS);
  const refusals = all['refused, fix named'] + all['refused, fix not named'];
  console.log(
    `\nwhitespace-class applied as intended: ${ws.intended}/${wsCount} = ${percent(ws.intended, wsCount)} (target ≥ 90%)`,
  );
  if (baseline) {
    const b = total(baseline, WHITESPACE_KINDS);
    console.log(`  baseline: ${b.intended}/${wsCount} = ${percent(b.intended, wsCount)}`);
  }
  console.log(
    `applied wrongly: ${all['applied wrongly']} (target 0)${baseline ? `; baseline ${total(baseline, KINDS)['applied wrongly']}` : ''}`,
  );
  console.log(`refusals naming their fix: ${all['refused, fix named']}/${refusals} (target all)`);
}

if (!existsSync(FIXTURE)) {
  console.log(`skipped: ${FIXTURE_ABSENT}`);
  process.exit(0);
}
const scratch = mkdtempSync(path.join(tmpdir(), 'docwright-bench-edits-'));
try {
  const root = path.join(scratch, 'docs');
  cpSync(FIXTURE, root, { recursive: true });
  const cases = makeCases(pagesOf(root), Number(args['per-kind']), Number(args.seed));
  console.log(`${cases.length} perturbed edits of real pages of ${FIXTURE} (seed ${args.seed})`);
  const current = await measure(editFile as AgentTool, cases, root, 'edit_file');
  const baselineTool = args.baseline === 'none' ? null : await loadBaseline(args.baseline, scratch);
  const baseline = baselineTool ? await measure(baselineTool, cases, root, 'baseline') : null;
  if (baselineTool) console.log(`baseline: edit_file at ${args.baseline.slice(0, 12)}`);
  print(cases, current, baseline);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
