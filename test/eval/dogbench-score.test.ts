// DogBench's formula and judge checks (src/eval/dogbench-score.ts, dogbench-judge.ts), pinned on
// hand-made verdict sets: each rule once, with the score worked out by hand beside it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateVerdicts } from '../../src/eval/dogbench-judge.ts';
import { type DogBenchCriterion, dogbenchCriteria } from '../../src/eval/dogbench-rubric.ts';
import {
  type DogBenchVerdict,
  dogbenchItemRow,
  dogbenchNumericScore,
  dogbenchSummary,
  roundLikePython,
} from '../../src/eval/dogbench-score.ts';

const criterion = (
  id: string,
  priority: DogBenchCriterion['priority'],
  scoring: DogBenchCriterion['scoring'],
) => ({
  id,
  text: id,
  priority,
  category: 'c',
  scoring,
});

const base = {
  triggering_patch_quote: null,
  supporting_patch_quote: null,
  contradicting_patch_quote: null,
  missing_requirement: null,
  reason: 'r',
};
const req = (id: string, verdict: 'pass' | 'fail'): DogBenchVerdict => ({
  ...base,
  id,
  scoring_type: 'requirement',
  triggered: null,
  verdict,
  violated: null,
});
const cond = (id: string, triggered: boolean, verdict: 'pass' | 'fail' | null = null): DogBenchVerdict => ({
  ...base,
  id,
  scoring_type: 'conditional',
  triggered,
  verdict,
  violated: null,
});
const ded = (id: string, violated: boolean): DogBenchVerdict => ({
  ...base,
  id,
  scoring_type: 'deduction_only',
  triggered: null,
  verdict: null,
  violated,
});

test('every criterion weighs 1, whatever its priority', () => {
  const criteria = [
    criterion('C1', 'P1', 'requirement'),
    criterion('C2', 'P3', 'requirement'),
    criterion('C3', 'P2', 'requirement'),
  ];
  // 2 of 3 passed: 66.666… → 66.7 (docwright's weights 2/1/1 would give 75).
  const score = dogbenchNumericScore([req('C1', 'pass'), req('C2', 'pass'), req('C3', 'fail')], criteria);
  assert.equal(score.overall, 66.7);
  assert.equal(score.mergeable, true);
});

test('a violated deduction takes one criterion of credit before normalising', () => {
  const criteria = [
    criterion('C1', 'P1', 'requirement'),
    criterion('C2', 'P1', 'requirement'),
    criterion('C3', 'P1', 'requirement'),
    criterion('C4', 'P1', 'requirement'),
    criterion('C5', 'P2', 'deduction_only'),
  ];
  // (4 − 1) / 4 = 75, not 100 − 10 points after normalising.
  const score = dogbenchNumericScore(
    [req('C1', 'pass'), req('C2', 'pass'), req('C3', 'pass'), req('C4', 'pass'), ded('C5', true)],
    criteria,
  );
  assert.equal(score.overall, 75);
  assert.equal(score.guardrail_penalty_weight, 1);
  // Earned never goes below 0.
  const floor = dogbenchNumericScore(
    [req('C1', 'fail'), req('C2', 'fail'), req('C3', 'fail'), req('C4', 'pass'), ded('C5', true)],
    criteria,
  );
  assert.equal(floor.overall, 0);
});

test('an untriggered conditional counts in neither earned nor possible; a triggered one counts', () => {
  const criteria = [criterion('C1', 'P1', 'requirement'), criterion('C2', 'P1', 'conditional')];
  assert.equal(dogbenchNumericScore([req('C1', 'pass'), cond('C2', false)], criteria).overall, 100);
  assert.equal(dogbenchNumericScore([req('C1', 'pass'), cond('C2', true, 'fail')], criteria).overall, 50);
  assert.equal(dogbenchNumericScore([req('C1', 'fail'), cond('C2', true, 'pass')], criteria).overall, 50);
});

test('a failed P0 requirement, violated P0 deduction or failed triggered P0 conditional caps at 60 and is not mergeable', () => {
  const p0req = [
    criterion('C1', 'P0', 'requirement'),
    criterion('C2', 'P1', 'requirement'),
    criterion('C3', 'P1', 'requirement'),
    criterion('C4', 'P1', 'requirement'),
    criterion('C5', 'P1', 'requirement'),
  ];
  // 4 of 5 = 80, capped at 60.
  const failedP0 = dogbenchNumericScore(
    [req('C1', 'fail'), req('C2', 'pass'), req('C3', 'pass'), req('C4', 'pass'), req('C5', 'pass')],
    p0req,
  );
  assert.deepEqual(
    [failedP0.overall, failedP0.uncapped_overall, failedP0.mergeable, failedP0.blocking_p0],
    [60, 80, false, ['C1']],
  );

  const p0ded = [criterion('C1', 'P1', 'requirement'), criterion('C2', 'P0', 'deduction_only')];
  const violated = dogbenchNumericScore([req('C1', 'pass'), ded('C2', true)], p0ded);
  // (1 − 1) / 1 = 0, and not mergeable.
  assert.deepEqual([violated.overall, violated.mergeable, violated.blocking_p0], [0, false, ['C2']]);
  const clean = dogbenchNumericScore([req('C1', 'pass'), ded('C2', false)], p0ded);
  assert.deepEqual([clean.overall, clean.mergeable], [100, true]);

  const p0cond = [
    criterion('C1', 'P1', 'requirement'),
    criterion('C2', 'P1', 'requirement'),
    criterion('C3', 'P0', 'conditional'),
  ];
  const failedCond = dogbenchNumericScore(
    [req('C1', 'pass'), req('C2', 'pass'), cond('C3', true, 'fail')],
    p0cond,
  );
  // 2 of 3 = 66.7, capped at 60.
  assert.deepEqual([failedCond.overall, failedCond.mergeable], [60, false]);
  const untriggered = dogbenchNumericScore([req('C1', 'pass'), req('C2', 'pass'), cond('C3', false)], p0cond);
  assert.deepEqual(
    [untriggered.overall, untriggered.mergeable],
    [100, true],
    'an untriggered P0 conditional blocks nothing',
  );
});

test('an item with no scorable criterion scores 0; a wrong decision or a failure scores 0; a right abstention 100', () => {
  const onlyGuardrail = dogbenchNumericScore([ded('C1', false)], [criterion('C1', 'P1', 'deduction_only')]);
  assert.equal(onlyGuardrail.overall, 0);
  assert.equal(dogbenchItemRow('a', 'abstain', 'completed', 0).overall, 100);
  assert.equal(dogbenchItemRow('a', 'abstain', 'completed', 2).overall, 0);
  assert.equal(
    dogbenchItemRow('a', 'abstain', 'failed', 0).overall,
    0,
    'a failure is never a right abstention',
  );
  const patchNone = dogbenchItemRow('b', 'patch', 'completed', 0);
  assert.deepEqual(
    [patchNone.decision, patchNone.decision_correct, patchNone.overall],
    ['abstain', false, 0],
  );
});

test("the summary: patch quality is the patch items' mean, abstention recall a share; no composite unless every item ran", () => {
  const rows = [
    { ...dogbenchItemRow('p1', 'patch', 'completed', 1), overall: 87.5, mergeable: true },
    { ...dogbenchItemRow('p2', 'patch', 'completed', 1), overall: 60, mergeable: false },
    dogbenchItemRow('p3', 'patch', 'failed', 0),
    dogbenchItemRow('a1', 'abstain', 'completed', 0),
    dogbenchItemRow('a2', 'abstain', 'completed', 3),
  ];
  const summary = dogbenchSummary(rows, true);
  // Q = (87.5 + 60 + 0) / 3 = 49.1666…; A = 50; composite = 2·Q·A / (Q + A) = 49.5798…
  assert.ok(Math.abs(summary.delivered_patch_quality! - 49.1667) < 0.01);
  assert.equal(summary.no_op_recall, 50);
  assert.ok(Math.abs(summary.composite_score! - 49.58) < 0.01);
  assert.ok(Math.abs(summary.p0_clean_delivery_percent! - 33.33) < 0.01);
  assert.ok(Math.abs(summary.documentation_quality_mean! - 73.75) < 0.01);
  assert.equal(summary.documentation_quality_median, 73.75);
  assert.equal(summary.execution_failures, 1);
  assert.equal(dogbenchSummary(rows, false).composite_score, null);
});

test("rounding is Python's: exact halves go to the even digit", () => {
  assert.equal(roundLikePython(6.25), 6.2);
  assert.equal(roundLikePython(6.75), 6.8);
  assert.equal(roundLikePython(66.66666), 66.7);
  assert.equal(roundLikePython(87.5), 87.5);
});

const PATCH = [
  'diff --git a/docs/config.md b/docs/config.md',
  '--- a/docs/config.md',
  '+++ b/docs/config.md',
  '@@ -1,3 +1,5 @@',
  ' # Configuration',
  '+',
  '+`retries`: attempts after a failure,',
  '+    default 3.',
].join('\n');

test('a quote not in the patch is never accepted; quotes across added lines and unchanged context are', () => {
  const criteria = [criterion('C1', 'P0', 'requirement')];
  const withQuote = (quote: string) => [{ ...req('C1', 'pass'), supporting_patch_quote: quote }];
  assert.doesNotThrow(() =>
    validateVerdicts(withQuote('`retries`: attempts after a failure, default 3.'), criteria, PATCH),
  );
  assert.doesNotThrow(() => validateVerdicts(withQuote('# Configuration `retries`'), criteria, PATCH));
  assert.throws(
    () => validateVerdicts(withQuote('retries default to 3'), criteria, PATCH),
    /not an exact patch quote/,
  );
  assert.throws(
    () => validateVerdicts(withQuote('attempts … default 3'), criteria, PATCH),
    /not an exact patch quote/,
  );
});

test('verdicts must follow the rubric: order, scoring types, evidence for fails, triggers and violations', () => {
  const criteria = [
    criterion('C1', 'P0', 'requirement'),
    criterion('C2', 'P1', 'conditional'),
    criterion('C3', 'P1', 'deduction_only'),
  ];
  const good = [req('C1', 'pass'), cond('C2', false), ded('C3', false)];
  assert.doesNotThrow(() => validateVerdicts(good, criteria, PATCH));
  assert.throws(() => validateVerdicts([good[1]!, good[0]!, good[2]!], criteria, PATCH), /rubric order/);
  assert.throws(
    () => validateVerdicts([req('C1', 'fail'), good[1]!, good[2]!], criteria, PATCH),
    /fail lacks contradiction/,
  );
  assert.throws(
    () => validateVerdicts([good[0]!, cond('C2', true, 'pass'), good[2]!], criteria, PATCH),
    /lacks exact activating/,
  );
  assert.throws(
    () => validateVerdicts([good[0]!, good[1]!, ded('C3', true)], criteria, PATCH),
    /lacks exact prohibited/,
  );
  assert.throws(
    () => validateVerdicts([good[0]!, cond('C2', false, 'pass'), good[2]!], criteria, PATCH),
    /untriggered conditional requires null/,
  );
});

test('rubrics are read as DogBench reads them: blocks to the next criterion, P3 kept, metadata required', () => {
  const criteria = dogbenchCriteria(
    '# R\n### C1 — One\n**Priority:** P3 | **Category:** style | **Scoring:** conditional\nText\n## Summary\n1. **C2: Two**\n**Priority:** P0 | **Category:** facts | **Scoring:** deduction-only\n',
  );
  assert.deepEqual(
    criteria.map((c) => [c.id, c.priority, c.category, c.scoring]),
    [
      ['C1', 'P3', 'style', 'conditional'],
      ['C2', 'P0', 'facts', 'deduction_only'],
    ],
  );
  assert.match(criteria[0]!.text, /## Summary/, 'a block runs to the next criterion, as in DogBench');
  assert.throws(
    () => dogbenchCriteria('### C1 — x\n**Priority:** P0 | **Scoring:** requirement\n'),
    /C1 lacks/,
  );
  assert.throws(() => dogbenchCriteria('no criteria'), /no criterion headings/);
});
