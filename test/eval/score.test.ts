import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type JudgedCheck, p0Clean, type SummaryInput, summarize, taskScore } from '../../src/eval/score.ts';

const req = (priority: JudgedCheck['priority'], passed: boolean): JudgedCheck => ({
  priority,
  scoring: 'requirement',
  passed,
});
const ded = (priority: JudgedCheck['priority'], passed: boolean, points?: number): JudgedCheck => ({
  priority,
  scoring: 'deduction',
  passed,
  ...(points !== undefined && { points }),
});

describe('taskScore: the scoring rule of docs/evaluation.mdx, clause by clause', () => {
  test('requirement points by priority: P0 3, P1 2, P2 1, passed over possible × 100', () => {
    // Of P0 (3) + P1 (2) + P2 (1) = 6 possible points: 5, 4, 3 passed.
    assert.equal(taskScore('patch', 'patch', [req('P0', true), req('P1', true), req('P2', false)]), 83.3);
    assert.equal(taskScore('patch', 'patch', [req('P0', true), req('P1', false), req('P2', true)]), 66.7);
    assert.equal(taskScore('patch', 'patch', [req('P0', true), req('P1', false), req('P2', false)]), 50);
    assert.equal(taskScore('patch', 'patch', [req('P1', true), req('P2', false)]), 66.7);
    assert.equal(taskScore('patch', 'patch', [req('P1', false), req('P2', true)]), 33.3);
  });

  test('a violated deduction takes off its priority points × 10 by default, or its own points', () => {
    const all = [req('P0', true), req('P1', true)];
    assert.equal(taskScore('patch', 'patch', [...all, ded('P0', false)]), 70);
    assert.equal(taskScore('patch', 'patch', [...all, ded('P1', false)]), 80);
    assert.equal(taskScore('patch', 'patch', [...all, ded('P2', false)]), 90);
    assert.equal(taskScore('patch', 'patch', [...all, ded('P2', false, 25)]), 75);
    assert.equal(taskScore('patch', 'patch', [...all, ded('P2', false, 0)]), 100, 'points 0 deducts nothing');
    assert.equal(
      taskScore('patch', 'patch', [...all, ded('P0', true), ded('P1', true)]),
      100,
      'kept deductions cost nothing',
    );
    assert.equal(
      taskScore('patch', 'patch', [...all, ded('P1', false), ded('P2', false)]),
      70,
      'deductions add up',
    );
  });

  test('a failed P0 requirement caps the task at 60; a failed P1 or P2 does not', () => {
    const many = [req('P0', false), ...Array.from({ length: 20 }, () => req('P1', true))];
    assert.equal(taskScore('patch', 'patch', many), 60, '40/43 would be 93');
    assert.equal(
      taskScore('patch', 'patch', [req('P0', false), req('P1', true)]),
      40,
      'under the cap it stays',
    );
    assert.equal(
      taskScore('patch', 'patch', [
        req('P0', true),
        ...Array.from({ length: 20 }, () => req('P1', true)),
        req('P2', false),
      ]),
      97.7,
    );
    assert.equal(
      taskScore('patch', 'patch', [req('P0', true), req('P1', true), ded('P0', false, 5)]),
      95,
      'a violated P0 deduction deducts, it does not cap',
    );
  });

  test('the score is floored at 0', () => {
    assert.equal(
      taskScore('patch', 'patch', [
        req('P1', true),
        ded('P0', false),
        ded('P0', false),
        ded('P0', false),
        ded('P0', false),
      ]),
      0,
    );
    assert.equal(taskScore('patch', 'patch', [req('P0', false), ded('P1', false)]), 0);
  });

  test('with no requirement a patch task starts from 100', () => {
    assert.equal(taskScore('patch', 'patch', []), 100);
    assert.equal(taskScore('patch', 'patch', [ded('P1', false)]), 80);
  });

  test('a failed job scores 0, whatever its checks say', () => {
    assert.equal(taskScore('patch', 'failed', [req('P1', true)]), 0);
    assert.equal(taskScore('patch', 'failed', []), 0);
    assert.equal(taskScore('no-changes', 'failed', []), 0);
  });

  test('a no-changes task scores 100 when the job completed with no changed file, else 0', () => {
    assert.equal(taskScore('no-changes', 'no-changes', []), 100);
    assert.equal(
      taskScore('no-changes', 'no-changes', [req('P0', false)]),
      100,
      'its checks do not enter the score',
    );
    assert.equal(taskScore('no-changes', 'patch', [req('P0', true)]), 0);
  });

  test('a patch task whose job changed nothing scores 0, whatever its checks say', () => {
    assert.equal(taskScore('patch', 'no-changes', [req('P0', false), req('P1', true)]), 0);
    // `valid` and `unchanged` hold for an untouched tree: they earn a model that never writes nothing.
    assert.equal(taskScore('patch', 'no-changes', [req('P0', true), req('P1', true)]), 0);
    assert.equal(taskScore('patch', 'no-changes', []), 0);
  });
});

describe('p0Clean', () => {
  test('every P0 requirement passed; P0 deductions and other priorities do not count; a job that delivered nothing is never clean', () => {
    assert.equal(p0Clean('patch', 'patch', [req('P0', true), req('P1', false), ded('P0', false)]), true);
    assert.equal(p0Clean('patch', 'patch', [req('P0', true), req('P0', false)]), false);
    assert.equal(p0Clean('no-changes', 'no-changes', []), true);
    assert.equal(p0Clean('patch', 'failed', []), false);
    assert.equal(p0Clean('patch', 'no-changes', [req('P0', true)]), false, 'a patch task left untouched');
  });
});

describe('summarize', () => {
  const task = (
    expected: SummaryInput['expected'],
    score: number | null,
    clean = true,
    tokens = { input: 10, output: 1 },
  ): SummaryInput => ({ expected, score, p0Clean: clean, tokens });

  test('D is the mean patch score, N the share of no-changes tasks at 100, composite their harmonic mean', () => {
    const summary = summarize(
      [
        task('patch', 100),
        task('patch', 50, false),
        task('patch', 60, false),
        task('no-changes', 100),
        task('no-changes', 0),
        task('no-changes', 100),
        task('no-changes', 100),
      ],
      12.34,
    );
    assert.equal(summary.D, 70);
    assert.equal(summary.N, 75);
    assert.equal(summary.composite, 72.4); // 2·70·75/145 = 72.41
    assert.equal(summary.p0CleanRate, 33.3);
    assert.equal(summary.tasks, 7);
    assert.equal(summary.patchTasks, 3);
    assert.equal(summary.noChangeTasks, 4);
    assert.deepEqual(summary.tokens, { input: 70, output: 7 });
    assert.equal(summary.seconds, 12.3);
  });

  test('composite is 0 when D and N are both 0', () => {
    const summary = summarize([task('patch', 0, false), task('no-changes', 0)], 1);
    assert.equal(summary.D, 0);
    assert.equal(summary.N, 0);
    assert.equal(summary.composite, 0);
    assert.equal(summary.p0CleanRate, 0);
  });

  test('invalid tasks (no score) count in tasks only; a figure with no task to stand on is null', () => {
    const summary = summarize([task('patch', 80), task(null, null, false, { input: 0, output: 0 })], 1);
    assert.equal(summary.tasks, 2);
    assert.equal(summary.patchTasks, 1);
    assert.equal(summary.noChangeTasks, 0);
    assert.equal(summary.D, 80);
    assert.equal(summary.N, null);
    assert.equal(summary.composite, null);
    const none = summarize([task('no-changes', 100)], 1);
    assert.equal(none.D, null);
    assert.equal(none.p0CleanRate, null);
    assert.equal(none.N, 100);
  });
});
