/**
 * DogBench's scoring (SPEC §18 `--dogbench`), as pure functions, so that docwright's figures can
 * be set beside DogBench's published ones. The rules are DogBench's (its `numeric_score`,
 * `score_predictions` and `build_report`):
 *
 * - every criterion weighs 1; a requirement counts in what is possible, and so does a conditional
 *   criterion that was triggered (one that was not counts in neither earned nor possible);
 * - each violated `deduction_only` criterion takes one criterion's credit off what was earned,
 *   before normalising; the item scores 100 × max(0, earned − penalty) / possible, 0 when nothing
 *   is possible;
 * - a failed P0 requirement, a violated P0 deduction or a failed triggered P0 conditional caps the
 *   item at 60 and makes it not mergeable;
 * - an item whose decision (patch or abstain) is wrong, or that failed, scores 0; a correct
 *   abstention scores 100;
 * - the report's composite is the harmonic mean of the patch items' mean and the abstention
 *   recall, and only when every item of the set ran.
 */
import type { DogBenchCriterion } from './dogbench-rubric.ts';

/** One criterion's verdict, in DogBench's names. */
export interface DogBenchVerdict {
  id: string;
  scoring_type: DogBenchCriterion['scoring'];
  triggered: boolean | null;
  verdict: 'pass' | 'fail' | null;
  violated: boolean | null;
  triggering_patch_quote: string | null;
  supporting_patch_quote: string | null;
  contradicting_patch_quote: string | null;
  missing_requirement: string | null;
  reason: string;
}

export const P0_SCORE_CEILING = 60;

/** Python's `round(value, 1)`: halves of the last place go to the even digit. */
export function roundLikePython(value: number): number {
  const scaled = value * 10;
  const floor = Math.floor(scaled);
  // Only a value that is a tie in binary too (x.25, x.75) is a tie for Python.
  if (scaled - floor === 0.5 && Number.isInteger(value * 4))
    return (floor % 2 === 0 ? floor : floor + 1) / 10;
  return Number(value.toFixed(1));
}

export interface DogBenchNumeric {
  requirement_credit_weight: number;
  requirement_total_weight: number;
  guardrail_penalty_weight: number;
  uncapped_overall: number;
  overall: number;
  mergeable: boolean;
  blocking_p0: string[];
}

/** An item's score from its verdicts (one per criterion, in the rubric's order). */
export function dogbenchNumericScore(
  verdicts: readonly DogBenchVerdict[],
  criteria: readonly DogBenchCriterion[],
): DogBenchNumeric {
  const byId = new Map(criteria.map((c) => [c.id, c]));
  let credit = 0;
  let total = 0;
  let penalty = 0;
  const blocking: string[] = [];
  for (const row of verdicts) {
    const criterion = byId.get(row.id);
    if (!criterion) throw new Error(`verdict for ${row.id}, which the rubric has not`);
    const active =
      criterion.scoring === 'requirement' || (criterion.scoring === 'conditional' && row.triggered === true);
    const failed =
      criterion.scoring === 'deduction_only' ? row.violated === true : active && row.verdict === 'fail';
    if (criterion.scoring === 'deduction_only') {
      if (row.violated) penalty += 1;
    } else if (active) {
      total += 1;
      if (row.verdict === 'pass') credit += 1;
    }
    if (criterion.priority === 'P0' && failed) blocking.push(row.id);
  }
  const uncapped = total === 0 ? 0 : (100 * Math.max(0, credit - penalty)) / total;
  const overall = blocking.length > 0 ? Math.min(uncapped, P0_SCORE_CEILING) : uncapped;
  return {
    requirement_credit_weight: credit,
    requirement_total_weight: total,
    guardrail_penalty_weight: penalty,
    uncapped_overall: roundLikePython(uncapped),
    overall: roundLikePython(overall),
    mergeable: blocking.length === 0,
    blocking_p0: blocking,
  };
}

export type DogBenchDecision = 'patch' | 'abstain';

/** One item's row, in DogBench's names. */
export interface DogBenchItemScore {
  instance_id: string;
  expected_outcome: DogBenchDecision;
  /** `completed`, or `failed` for an operational failure (the job failed or could not run). */
  status: 'completed' | 'failed';
  decision: DogBenchDecision | null;
  decision_correct: boolean;
  overall: number;
  mergeable: boolean;
  blocking_p0: string[];
}

/** The row of an item before any judging: decision, correctness, and the score that needs no judge. */
export function dogbenchItemRow(
  instanceId: string,
  expected: DogBenchDecision,
  status: 'completed' | 'failed',
  changedFiles: number,
): DogBenchItemScore {
  const decision = status === 'completed' ? (changedFiles > 0 ? 'patch' : 'abstain') : null;
  const correct = status === 'completed' && decision === expected;
  return {
    instance_id: instanceId,
    expected_outcome: expected,
    status,
    decision,
    decision_correct: correct,
    overall: correct && expected === 'abstain' ? 100 : 0,
    mergeable: false,
    blocking_p0: [],
  };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** DogBench's report summary; `complete` is whether every item of the set ran. */
export function dogbenchSummary(scores: readonly DogBenchItemScore[], complete: boolean) {
  const patches = scores.filter((s) => s.expected_outcome === 'patch');
  const abstentions = scores.filter((s) => s.expected_outcome === 'abstain');
  const correctPatches = patches.filter((s) => s.decision_correct);
  const q = patches.length > 0 ? mean(patches.map((s) => s.overall)) : null;
  const a =
    abstentions.length > 0
      ? (100 * abstentions.filter((s) => s.decision_correct).length) / abstentions.length
      : null;
  const percent = (part: number, whole: number) => (whole === 0 ? null : (100 * part) / whole);
  return {
    items: scores.length,
    complete,
    patch_needed: patches.length,
    no_op: abstentions.length,
    delivered_patch_quality: q,
    no_op_recall: a,
    composite_score: complete && q !== null && a !== null ? (q + a === 0 ? 0 : (2 * q * a) / (q + a)) : null,
    decision_accuracy_percent: percent(scores.filter((s) => s.decision_correct).length, scores.length),
    patch_recall_percent: percent(correctPatches.length, patches.length),
    p0_clean_delivery_percent: percent(
      patches.filter((s) => s.decision_correct && s.mergeable).length,
      patches.length,
    ),
    documentation_quality_mean: correctPatches.length > 0 ? mean(correctPatches.map((s) => s.overall)) : null,
    documentation_quality_median:
      correctPatches.length > 0 ? median(correctPatches.map((s) => s.overall)) : null,
    execution_failures: scores.filter((s) => s.status !== 'completed').length,
  };
}
export type DogBenchSummary = ReturnType<typeof dogbenchSummary>;
