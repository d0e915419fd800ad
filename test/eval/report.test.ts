// The eval HTML report colours an outcome by whether it is what the task expected (issue 35: a
// patch task whose job changed nothing showed `no-changes` in green). renderReport is the page
// `docwright eval --report` writes; here it renders tasks of each kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EvalRun } from '../../src/eval/eval.ts';
import { renderReport } from '../../src/eval/report.ts';
import type { TaskReport } from '../../src/eval/run-task.ts';
import { summarize } from '../../src/eval/score.ts';

const task = (id: string, expected: TaskReport['expected'], outcome: TaskReport['outcome'], score: number) =>
  ({
    id,
    origin: 'builtin',
    expected,
    outcome,
    score,
    p0Clean: true,
    checks: [],
    jobId: null,
    error: null,
    couldNotRun: false,
    tokens: { input: 1, output: 1 },
    seconds: 1,
    summary: null,
    diff: undefined,
  }) satisfies TaskReport;

test('an outcome is green only when the task expected it', () => {
  const tasks = [
    task('patch-missed', 'patch', 'no-changes', 0),
    task('patch-made', 'patch', 'patch', 90),
    task('abstained', 'no-changes', 'no-changes', 100),
    task('needless-patch', 'no-changes', 'patch', 0),
  ];
  const run: EvalRun = {
    suite: 'builtin',
    model: 'openai-compatible/x',
    judge: null,
    scoring: 'docwright',
    tasks,
    summary: summarize(tasks, 4),
    dogbench: null,
  };
  const page = renderReport(run);
  const badges = (id: string) => {
    const section = page.slice(page.indexOf(`<h2 id="task-${tasks.findIndex((t) => t.id === id)}-heading"`));
    return /<dt>Outcome<\/dt><dd>(.*?)<\/dd>/s.exec(section)![1]!;
  };
  assert.match(
    badges('patch-missed'),
    /class="status status-failed">no-changes<\/span> <span class="small muted">\(expected patch\)/,
  );
  assert.match(badges('patch-made'), /class="status status-completed">patch</);
  assert.match(badges('abstained'), /class="status status-completed">no-changes</);
  assert.match(
    badges('needless-patch'),
    /class="status status-failed">patch<\/span> <span class="small muted">\(expected no-changes\)/,
  );
});
