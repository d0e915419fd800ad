import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { parseRubric } from '../../src/eval/rubric.ts';
import { loadBuiltinSuite, loadSuiteFolder } from '../../src/eval/suite.ts';
import { type InvalidTask, isInvalid, type Task } from '../../src/eval/task.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

/** Writes `files` (path → content; a trailing `/` makes a folder) under `dir`. */
function write(dir: string, files: Record<string, string>) {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    if (name.endsWith('/')) mkdirSync(file, { recursive: true });
    else {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
  }
}

const checks = [{ type: 'changed', priority: 'P0', scoring: 'requirement' }];
const taskJson = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, instruction: 'Document it', expected: 'patch', checks, ...extra });
const docs = { 'docs/index.mdx': '# Hi\n' };

/** A suite of one good task and `bad` (folder → files), loaded. */
async function load(bad: Record<string, Record<string, string>>) {
  const dir = temporaryDirectory('docwright-suite-');
  write(path.join(dir, 'good'), { 'task.json': taskJson('good'), ...docs });
  for (const [name, files] of Object.entries(bad)) write(path.join(dir, name), files);
  const suite = await loadSuiteFolder(dir);
  const byId = new Map(suite.tasks.map((t) => [t.id, t]));
  const good = byId.get('good');
  assert.ok(good && !isInvalid(good), 'the good task loads beside the bad ones');
  return byId;
}

const errorOf = (task: Task | InvalidTask | undefined): string => {
  assert.ok(task && isInvalid(task), `invalid: ${JSON.stringify(task)}`);
  return task.error;
};

describe('a suite folder: each malformed task is invalid, naming its file and the problem; the others load', () => {
  test('task.json missing, not JSON, or not the docs/evaluation.mdx shape', async () => {
    const tasks = await load({
      missing: { ...docs },
      'not-json': { 'task.json': '{"id": "x",', ...docs },
      typo: { 'task.json': taskJson('typo', { instuction: 'x' }), ...docs },
      'no-instruction': {
        'task.json': JSON.stringify({ id: 'no-instruction', expected: 'patch', checks }),
        ...docs,
      },
      'bad-expected': { 'task.json': taskJson('bad-expected', { expected: 'maybe' }), ...docs },
      'bad-id': { 'task.json': taskJson('has space'), ...docs },
    });
    assert.equal(errorOf(tasks.get('missing')), 'task.json: missing');
    assert.match(errorOf(tasks.get('not-json')), /^task\.json: invalid JSON: /);
    assert.match(errorOf(tasks.get('typo')), /^task\.json: .*instuction is not a known field/);
    assert.match(errorOf(tasks.get('no-instruction')), /^task\.json: instruction /);
    assert.match(errorOf(tasks.get('bad-expected')), /^task\.json: expected /);
    assert.match(errorOf(tasks.get('bad-id')), /^task\.json: id must be letters/);
    // Its kind is reported whenever task.json still says it.
    const expected = (id: string) => (tasks.get(id) as InvalidTask).expected;
    assert.equal(expected('typo'), 'patch');
    assert.equal(expected('no-instruction'), 'patch');
    assert.equal(expected('bad-id'), 'patch');
    assert.equal(expected('missing'), null);
    assert.equal(expected('not-json'), null);
    assert.equal(expected('bad-expected'), null);
  });

  test('checks: a missing or misplaced pattern, a bad regular expression or glob, points on a requirement, a patch task without checks', async () => {
    const check = (c: Record<string, unknown>) => ({ priority: 'P1', scoring: 'requirement', ...c });
    const tasks = await load({
      'no-pattern': {
        'task.json': taskJson('no-pattern', { checks: [check({ type: 'contains', path: 'a.mdx' })] }),
        ...docs,
      },
      'stray-pattern': {
        'task.json': taskJson('stray-pattern', { checks: [check({ type: 'changed', pattern: 'x' })] }),
        ...docs,
      },
      'bad-regex': {
        'task.json': taskJson('bad-regex', { checks: [check({ type: 'contains', pattern: '(unclosed' })] }),
        ...docs,
      },
      'bad-glob': {
        'task.json': taskJson('bad-glob', { checks: [check({ type: 'changed', path: '!(index).mdx' })] }),
        ...docs,
      },
      'requirement-points': {
        'task.json': taskJson('requirement-points', { checks: [check({ type: 'changed', points: 5 })] }),
        ...docs,
      },
      'bad-type': { 'task.json': taskJson('bad-type', { checks: [check({ type: 'looks-good' })] }), ...docs },
      'no-checks': { 'task.json': taskJson('no-checks', { checks: [] }), ...docs },
    });
    assert.match(
      errorOf(tasks.get('no-pattern')),
      /^task\.json: checks\.0\.pattern is required for a contains check/,
    );
    assert.match(
      errorOf(tasks.get('stray-pattern')),
      /^task\.json: checks\.0\.pattern applies only to contains/,
    );
    assert.match(
      errorOf(tasks.get('bad-regex')),
      /^task\.json: checks\.0\.pattern invalid regular expression/,
    );
    assert.match(
      errorOf(tasks.get('bad-glob')),
      /^task\.json: checks\.0\.path must be a glob such as \*\*\/\*\.mdx \(invalid glob/,
    );
    assert.match(
      errorOf(tasks.get('requirement-points')),
      /^task\.json: checks\.0\.points applies only to deductions/,
    );
    assert.match(errorOf(tasks.get('bad-type')), /^task\.json: checks\.0\.type /);
    assert.match(
      errorOf(tasks.get('no-checks')),
      /^task\.json: checks a patch task needs at least one check/,
    );
  });

  test('docs/ missing, a docsDir that is not in it, half a code change', async () => {
    const tasks = await load({
      'no-docs': { 'task.json': taskJson('no-docs') },
      'no-docs-dir': { 'task.json': taskJson('no-docs-dir', { docsDir: 'site' }), ...docs },
      'half-code': { 'task.json': taskJson('half-code'), ...docs, 'code/base/app.py': 'x = 1\n' },
      'empty-code': { 'task.json': taskJson('empty-code'), ...docs, 'code/': '' },
    });
    assert.equal(errorOf(tasks.get('no-docs')), "docs/: missing (the docs repository's base tree)");
    assert.equal(errorOf(tasks.get('no-docs-dir')), 'docs/site/: missing (the docsDir of task.json)');
    assert.equal(
      errorOf(tasks.get('half-code')),
      'code/head/: missing (a code change needs code/base/ and code/head/)',
    );
    assert.match(errorOf(tasks.get('empty-code')), /^code\/base\/: missing/);
  });

  test('rubric.md: a malformed criterion tag (with its line), or no criterion at all', async () => {
    const tasks = await load({
      'bad-tag': {
        'task.json': taskJson('bad-tag'),
        ...docs,
        'rubric.md': '# R\n\n- [P0] Fine.\n- [P3] Not a priority.\n',
      },
      'no-criteria': {
        'task.json': taskJson('no-criteria', { expected: 'no-changes', checks: [] }),
        ...docs,
        'rubric.md': '# R\n\nJust prose.\n',
      },
    });
    assert.match(errorOf(tasks.get('bad-tag')), /^rubric\.md: line 4: "\[P3\]" is not a criterion tag/);
    assert.match(errorOf(tasks.get('no-criteria')), /^rubric\.md: has no criteria/);
    assert.equal((tasks.get('bad-tag') as InvalidTask).expected, 'patch', 'the kind task.json gives');
    assert.equal((tasks.get('no-criteria') as InvalidTask).expected, 'no-changes');
  });

  test('a second task with an id already used is invalid, naming the first', async () => {
    const tasks = await loadSuiteFolder(
      (() => {
        const dir = temporaryDirectory('docwright-suite-');
        write(path.join(dir, 'a'), { 'task.json': taskJson('same'), ...docs });
        write(path.join(dir, 'b'), { 'task.json': taskJson('same'), ...docs });
        return dir;
      })(),
    );
    assert.equal(tasks.tasks.length, 2);
    assert.ok(!isInvalid(tasks.tasks[0]!));
    assert.match(errorOf(tasks.tasks[1]), /^task\.json: id "same" is already the id of .*\/a$/);
    assert.equal((tasks.tasks[1] as InvalidTask).expected, 'patch');
  });

  test('a folder holding task.json is a suite of that one task; a folder of no task is refused', async () => {
    const dir = temporaryDirectory('docwright-suite-');
    write(dir, { 'task.json': taskJson('alone'), ...docs });
    const suite = await loadSuiteFolder(dir);
    assert.deepEqual(
      suite.tasks.map((t) => t.id),
      ['alone'],
    );
    await assert.rejects(loadSuiteFolder(temporaryDirectory('docwright-suite-')), /holds no task folders/);
    await assert.rejects(loadSuiteFolder(path.join(dir, 'nope')), /is not a folder/);
  });

  test('a valid task keeps everything task.json and rubric.md say', async () => {
    const dir = temporaryDirectory('docwright-suite-');
    write(path.join(dir, 't'), {
      'task.json': taskJson('t', {
        docsDir: 'site',
        change: { title: 'Add X', description: 'X is new.' },
        checks: [
          { type: 'contains', path: 'site/*.mdx', pattern: 'X', priority: 'P0', scoring: 'requirement' },
          { type: 'unchanged', path: 'docs.json', priority: 'P2', scoring: 'deduction', points: 5 },
        ],
      }),
      'docs/site/index.mdx': '# Hi\n',
      'code/base/x.py': 'x = 1\n',
      'code/head/x.py': 'x = 2\n',
      'rubric.md':
        '# R\nEquivalent wording passes.\n\n- [P0] X is documented.\n  With its default.\n- [P2 deduction] Nothing else changes.\n',
    });
    const [task] = (await loadSuiteFolder(dir)).tasks;
    assert.ok(task && !isInvalid(task));
    assert.equal(task.docsDir, 'site');
    assert.deepEqual(task.change, { title: 'Add X', description: 'X is new.' });
    assert.equal(task.checks[1]!.points, 5);
    assert.ok(task.code);
    assert.deepEqual(task.rubric, {
      criteria: [
        { text: 'X is documented.\nWith its default.', priority: 'P0', scoring: 'requirement' },
        { text: 'Nothing else changes.', priority: 'P2', scoring: 'deduction' },
      ],
      guidance: '# R\nEquivalent wording passes.',
    });
  });
});

describe('rubrics', () => {
  test('rubric.md: ordinary list items, task lists and links are not criteria', () => {
    const rubric = parseRubric(
      '- a note\n- [x] done\n- [a link](https://example.com)\n- [P1] The one criterion.\n',
    );
    assert.deepEqual(
      rubric.criteria.map((c) => c.text),
      ['The one criterion.'],
    );
  });
});

describe('the built-in suite', () => {
  test('at least 12 valid tasks, at least 4 of them no-changes, each with checks and a rubric', async () => {
    const suite = await loadBuiltinSuite();
    const tasks = suite.tasks.map((t) => {
      assert.ok(!isInvalid(t), `${t.id}: ${isInvalid(t) ? t.error : ''}`);
      return t;
    });
    assert.ok(tasks.length >= 12, `${tasks.length} tasks`);
    assert.ok(tasks.filter((t) => t.expected === 'no-changes').length >= 4);
    for (const task of tasks) {
      assert.ok(task.checks.length > 0, `${task.id} has checks`);
      assert.ok(task.rubric && task.rubric.criteria.length > 0, `${task.id} has a rubric`);
      if (task.expected === 'patch')
        assert.ok(
          task.checks.some((c) => c.priority === 'P0' && c.scoring === 'requirement'),
          `${task.id} has a P0 requirement`,
        );
    }
  });
});
