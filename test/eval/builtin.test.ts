// The built-in suite through `docwright eval` (no SUITE_DIR), as a real process with the real
// pipeline: a model that solves every task scores 100 on each (so every check can be met by a
// reasonable change), and a model that changes nothing passes the no-change tasks, scores 0 on
// every patch task and fails a P0 requirement of each (so the checks notice missing work).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadBuiltinSuite } from '../../src/eval/suite.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { taskModel } from '../doubles/task-model.ts';
import { runCli } from '../helpers/process.ts';
import { temporaryDirectory } from '../helpers/temp.ts';
import { BUILTIN_SOLUTIONS, builtinPlans } from './builtin-solutions.ts';

interface Doc {
  suite: string;
  tasks: {
    id: string;
    expected: string;
    outcome: string;
    score: number;
    p0Clean: boolean;
    checks: { priority: string; scoring: string; passed: boolean }[];
    error: string | null;
  }[];
  summary: {
    D: number;
    N: number;
    composite: number;
    tasks: number;
    patchTasks: number;
    noChangeTasks: number;
  };
}

describe('the built-in suite, run by docwright eval', () => {
  let solver: ScriptedServer;
  let idle: ScriptedServer;
  const run = (server: ScriptedServer) =>
    runCli(
      ['eval', '--model', 'openai-compatible/scripted', '--json'],
      {
        DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: server.url,
        TMPDIR: temporaryDirectory('docwright-builtin-tmp-'),
      },
      '',
      { timeoutMs: 240_000 },
    );

  before(async () => {
    solver = await startOpenAIServer({ fallback: taskModel(await builtinPlans()) });
    const nothing = Object.fromEntries(
      Object.keys(BUILTIN_SOLUTIONS).map((id) => [
        id,
        [toolCall('finish', { title: 'No change', summary: 'Nothing to do.' })],
      ]),
    );
    idle = await startOpenAIServer({ fallback: taskModel(await builtinPlans(nothing)) });
  });
  after(async () => {
    await Promise.all([solver.close(), idle.close()]);
  });

  test('a model that solves each task scores 100 on every one of them', async () => {
    const result = await run(solver);
    assert.equal(result.code, 0, result.stderr);
    const doc = JSON.parse(result.stdout) as Doc;
    assert.equal(doc.suite, 'builtin');
    const ids = (await loadBuiltinSuite()).tasks.map((t) => t.id);
    assert.deepEqual(
      doc.tasks.map((t) => t.id),
      ids,
    );
    for (const task of doc.tasks) {
      assert.equal(task.score, 100, `${task.id}: ${task.outcome} ${task.error ?? ''}`);
      assert.equal(task.outcome, task.expected);
    }
    assert.deepEqual(
      { D: doc.summary.D, N: doc.summary.N, composite: doc.summary.composite },
      { D: 100, N: 100, composite: 100 },
    );
  });

  test('a model that never changes anything: every no-change task 100, every patch task 0, D 0', async () => {
    const result = await run(idle);
    assert.equal(result.code, 0, result.stderr);
    const doc = JSON.parse(result.stdout) as Doc;
    for (const task of doc.tasks) {
      assert.equal(task.outcome, 'no-changes', task.id);
      if (task.expected === 'no-changes') assert.equal(task.score, 100, task.id);
      else {
        assert.equal(task.p0Clean, false, `${task.id}: nothing was done`);
        assert.ok(
          task.checks.some((c) => c.priority === 'P0' && c.scoring === 'requirement' && !c.passed),
          `${task.id}: a P0 requirement notices that nothing was done`,
        );
        // `valid` and `unchanged` checks hold for the untouched tree; they must not earn points.
        assert.equal(task.score, 0, `${task.id}: ${task.score}`);
      }
    }
    assert.equal(doc.summary.N, 100);
    assert.equal(doc.summary.D, 0);
    assert.equal(doc.summary.composite, 0);
  });
});
