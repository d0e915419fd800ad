// Verification's runner (src/agent/verify/verify-tree.ts, rounds.ts): what the run introduced is
// told from what the base had by running the same check on both trees; what blocks, what is shown
// once, and the report's statuses over repair rounds. The checks here are small real ones.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { VerificationRounds } from '../../src/agent/verify/rounds.ts';
import { checkoutTree, overlayTree } from '../../src/agent/verify/tree.ts';
import type { Check, Finding, RunChanges } from '../../src/agent/verify/types.ts';
import { verifyTree } from '../../src/agent/verify/verify-tree.ts';
import { checksSection } from '../../src/pipeline/checks-section.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'docwright-verify-')));
  dirs.push(dir);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** Finds `TODO` (error) and `maybe` (warning) in the changed files and in every page that exists. */
const markers: Check = {
  name: 'markers',
  async run({ tree: t, changes }) {
    const findings: Finding[] = [];
    for (const file of [...changes.changed, ...changes.deleted]) {
      const text = await t.readText(file);
      if (text === null) continue;
      for (const [i, line] of text.split('\n').entries()) {
        if (line.includes('TODO'))
          findings.push({
            path: file,
            line: i + 1,
            message: 'a TODO is left: finish it',
            level: 'error',
            rule: 'todo',
          });
        if (line.includes('maybe'))
          findings.push({
            path: file,
            line: i + 1,
            message: 'say it plainly',
            level: 'warning',
            rule: 'hedge',
          });
      }
    }
    return { findings, counts: { pages: changes.changed.length } };
  },
};

const signal = new AbortController().signal;

test('a finding the base tree had is preexisting; one the run wrote is not, after a move too', async () => {
  // The run moved old.mdx (which had a TODO) to new.mdx and added a second TODO.
  const root = tree({ 'new.mdx': 'TODO one\n\nTODO two\n' });
  const changes: RunChanges = {
    changed: ['new.mdx'],
    deleted: ['old.mdx'],
    moved: [{ from: 'old.mdx', to: 'new.mdx' }],
  };
  const results = await verifyTree({
    root,
    docsDir: '.',
    changes,
    originals: new Map([
      ['old.mdx', 'TODO one\n'],
      ['new.mdx', null],
    ]),
    checks: [markers],
    signal,
  });
  // Both TODO lines have the same message: the base had one such finding at old.mdx, so both
  // are taken as the base's; a message that differs is the run's.
  assert.deepEqual(
    results[0]!.findings.map((f) => [f.line, f.preexisting]),
    [
      [1, true],
      [3, true],
    ],
  );
  const moved = await verifyTree({
    root,
    docsDir: '.',
    changes: { ...changes, moved: [] },
    originals: new Map([
      ['old.mdx', 'TODO one\n'],
      ['new.mdx', null],
    ]),
    checks: [markers],
    signal,
  });
  assert.deepEqual(
    moved[0]!.findings.map((f) => f.preexisting),
    [false, false],
    "without the move, new.mdx is a new page whose findings are all the run's",
  );
});

test("the base tree is the checkout with the run's originals: created files gone, deleted ones back", async () => {
  const root = tree({ 'a.mdx': 'now\n', 'dir/new.mdx': 'new\n' });
  const head = checkoutTree(root);
  const base = overlayTree(
    head,
    new Map([
      ['a.mdx', 'before\n'],
      ['dir/new.mdx', null],
      ['gone/old.mdx', 'old\n'],
    ]),
  );
  assert.equal(await base.readText('a.mdx'), 'before\n');
  assert.equal(await base.readText('dir/new.mdx'), null);
  assert.equal(await base.readText('gone/old.mdx'), 'old\n');
  assert.equal(await base.exists('gone'), 'dir');
  assert.equal(await base.exists('dir/new.mdx'), null);
  assert.deepEqual(await base.listFiles(), ['a.mdx', 'gone/old.mdx']);
  assert.deepEqual(await head.listFiles(), ['a.mdx', 'dir/new.mdx']);
  assert.equal(base.dir, null);
});

test("the base is read only when the run's tree has findings", async () => {
  const root = tree({ 'a.mdx': 'fine\n' });
  const states: string[] = [];
  const spy: Check = {
    name: 'spy',
    async run(input) {
      states.push(input.state);
      return markers.run(input);
    },
  };
  await verifyTree({
    root,
    docsDir: '.',
    changes: { changed: ['a.mdx'], deleted: [], moved: [] },
    originals: new Map([['a.mdx', 'TODO\n']]),
    checks: [spy],
    signal,
  });
  assert.deepEqual(states, ['head']);
});

test('a check that throws is skipped with its reason, and the others still run', async () => {
  const root = tree({ 'a.mdx': 'TODO\n' });
  const broken: Check = {
    name: 'broken',
    async run() {
      throw new Error('bad configuration');
    },
  };
  const results = await verifyTree({
    root,
    docsDir: '.',
    changes: { changed: ['a.mdx'], deleted: [], moved: [] },
    originals: new Map([['a.mdx', null]]),
    checks: [broken, markers],
    signal,
  });
  assert.match(results[0]!.skipped ?? '', /could not run: bad configuration/);
  assert.equal(results[1]!.findings.length, 1);
});

test('over repair rounds: errors block, warnings are shown once, statuses say what happened', async () => {
  const rounds = new VerificationRounds();
  const root = tree({ 'a.mdx': 'TODO\nmaybe\n', 'b.mdx': 'TODO\n' });
  const originals = new Map<string, string | null>([
    ['a.mdx', null],
    ['b.mdx', 'TODO\n'],
  ]);
  const changes: RunChanges = { changed: ['a.mdx', 'b.mdx'], deleted: [], moved: [] };
  const verify = () => verifyTree({ root, docsDir: '.', changes, originals, checks: [markers], signal });

  const first = rounds.record(await verify());
  assert.deepEqual(
    first.blocking.map((f) => f.path),
    ['a.mdx'],
    "b.mdx's TODO was in the base: it never blocks",
  );
  assert.deepEqual(
    first.advisory.map((f) => f.rule),
    ['hedge'],
  );
  assert.equal(rounds.report()[0]!.status, 'failed');

  writeFileSync(path.join(root, 'a.mdx'), 'done\nmaybe\n');
  const second = rounds.record(await verify());
  assert.deepEqual(second.blocking, []);
  assert.deepEqual(second.advisory, [], 'a warning is shown to the model once');
  const [report] = rounds.report();
  assert.equal(report!.status, 'fixed');
  assert.deepEqual(
    report!.findings.map((f) => [f.path, f.level, f.preexisting]),
    [
      ['a.mdx', 'warning', false],
      ['b.mdx', 'error', true],
    ],
  );

  const clean = new VerificationRounds();
  clean.record([{ name: 'markers', findings: [] }]);
  assert.equal(clean.report()[0]!.status, 'passed');
  const skipped = new VerificationRounds();
  skipped.record([{ name: 'spelling', findings: [], skipped: 'no cspell configuration' }]);
  assert.equal(skipped.report()[0]!.status, 'skipped');
});

test("the pull request's Checks section lists each check, what it covered, and what was already there", () => {
  const section = checksSection([
    { name: 'links', status: 'fixed', findings: [], counts: { links: 41, anchors: 7 } },
    { name: 'spelling', status: 'skipped', findings: [], skipped: 'no cspell configuration' },
    { name: 'vale docs', status: 'passed', findings: [] },
    {
      name: 'style',
      status: 'passed',
      findings: [
        {
          path: 'a.mdx',
          line: 3,
          message: 'Use "don\'t" | not "do not"',
          level: 'warning',
          preexisting: false,
        },
        { path: 'b.mdx', line: null, message: 'old problem', level: 'error', preexisting: true },
      ],
    },
  ]);
  assert.match(section, /^### Checks\n/);
  assert.match(section, /\| links \| passed, fixed by the agent \(41 links, 7 anchors\) \|/);
  assert.match(section, /\| spelling \| skipped: no cspell configuration \|/);
  assert.match(section, /\| `vale docs` \| passed \|/);
  assert.match(section, /- `a\.mdx:3` Use "don't" \\\| not "do not" \(warning, style\)/);
  assert.match(section, /Already there before this change[^\n]*\n\n- `b\.mdx` old problem \(style\)/);
  assert.equal(checksSection([]), '');
});
