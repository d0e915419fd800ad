/**
 * The scoring rule of `docwright eval` (docs/evaluation.mdx), as pure functions: a task's score from its
 * outcome and checks, and the suite's summary from its tasks. Nothing here reads a file or a
 * clock, so that every clause of the rule is tested on its own (test/eval/score.test.ts).
 */

export type Priority = 'P0' | 'P1' | 'P2';
export type Scoring = 'requirement' | 'deduction';
export type Expected = 'patch' | 'no-changes';
/** What the job did: completed with changed files, completed without, or failed. */
export type Outcome = 'patch' | 'no-changes' | 'failed';

/** Points a requirement is worth, by priority. */
export const PRIORITY_POINTS: Record<Priority, number> = { P0: 3, P1: 2, P2: 1 };

/** A failed P0 requirement caps the task's score here. */
export const P0_CAP = 60;

/** A check (deterministic or a judged criterion) once it has been evaluated. */
export interface JudgedCheck {
  priority: Priority;
  scoring: Scoring;
  /** A deduction's points; default its priority's points × 10. Requirements ignore it. */
  points?: number;
  passed: boolean;
}

/** What a violated deduction takes off the score. */
export const deductionPoints = (check: Pick<JudgedCheck, 'priority' | 'points'>): number =>
  check.points ?? PRIORITY_POINTS[check.priority] * 10;

/** Whether every P0 requirement passed (true when there is none). */
const p0RequirementsPassed = (checks: readonly JudgedCheck[]): boolean =>
  checks.every((c) => c.scoring !== 'requirement' || c.priority !== 'P0' || c.passed);

/**
 * Whether a patch task's job delivered nothing: it completed without changing a file. Its
 * checks do not count then, since `valid` or `unchanged` hold for an untouched tree and would
 * give a model that never writes a score.
 */
const deliveredNothing = (expected: Expected, outcome: Outcome): boolean =>
  outcome === 'failed' || (expected === 'patch' && outcome === 'no-changes');

/** Whether the task's every P0 requirement passed; a job that delivered nothing never is. */
export const p0Clean = (expected: Expected, outcome: Outcome, checks: readonly JudgedCheck[]): boolean =>
  !deliveredNothing(expected, outcome) && p0RequirementsPassed(checks);

/** One decimal place: the figures people compare. */
const round = (value: number): number => Math.round(value * 10) / 10;

/**
 * A task's score, 0–100. A failed job scores 0. A `no-changes` task scores 100 when the job
 * completed with no changed file, else 0. A `patch` task whose job changed nothing scores 0;
 * otherwise its passed requirement points over its possible requirement points × 100 (100 when it
 * has no requirement), less each violated deduction's points, floored at 0, and at most 60 when a
 * P0 requirement failed.
 */
export function taskScore(expected: Expected, outcome: Outcome, checks: readonly JudgedCheck[]): number {
  if (deliveredNothing(expected, outcome)) return 0;
  if (expected === 'no-changes') return outcome === 'no-changes' ? 100 : 0;
  let possible = 0;
  let earned = 0;
  let deducted = 0;
  for (const check of checks) {
    if (check.scoring === 'deduction') {
      if (!check.passed) deducted += deductionPoints(check);
      continue;
    }
    possible += PRIORITY_POINTS[check.priority];
    if (check.passed) earned += PRIORITY_POINTS[check.priority];
  }
  let score = (possible === 0 ? 100 : (earned / possible) * 100) - deducted;
  score = Math.max(0, score);
  if (!p0RequirementsPassed(checks)) score = Math.min(score, P0_CAP);
  return round(score);
}

/** A task as the summary counts it; invalid tasks (which did not run) have no score. */
export interface SummaryInput {
  expected: Expected | null;
  score: number | null;
  p0Clean: boolean;
  tokens: { input: number; output: number };
}

export interface Summary {
  /** Mean score of the patch tasks; null when none ran. */
  D: number | null;
  /** Share of the no-changes tasks that scored 100; null when none ran. */
  N: number | null;
  /** 2·D·N/(D+N), 0 when both are 0; null when D or N is. */
  composite: number | null;
  /** Share of the patch tasks with every P0 requirement passed; null when none ran. */
  p0CleanRate: number | null;
  /** Tasks in the suite, invalid ones included. */
  tasks: number;
  /** Patch and no-changes tasks that ran (D and N are over these). */
  patchTasks: number;
  noChangeTasks: number;
  tokens: { input: number; output: number };
  /** Wall-clock time of the whole evaluation. */
  seconds: number;
}

const share = (part: number, whole: number): number | null =>
  whole === 0 ? null : round((part / whole) * 100);

/** The suite's figures, all on 0–100 (docs/evaluation.mdx). */
export function summarize(tasks: readonly SummaryInput[], seconds: number): Summary {
  const ran = tasks.filter((t) => t.score !== null && t.expected !== null);
  const patch = ran.filter((t) => t.expected === 'patch');
  const noChange = ran.filter((t) => t.expected === 'no-changes');
  const D = patch.length === 0 ? null : round(patch.reduce((sum, t) => sum + t.score!, 0) / patch.length);
  const N = share(noChange.filter((t) => t.score === 100).length, noChange.length);
  const composite = D === null || N === null ? null : D + N === 0 ? 0 : round((2 * D * N) / (D + N));
  return {
    D,
    N,
    composite,
    p0CleanRate: share(patch.filter((t) => t.p0Clean).length, patch.length),
    tasks: tasks.length,
    patchTasks: patch.length,
    noChangeTasks: noChange.length,
    tokens: {
      input: tasks.reduce((sum, t) => sum + t.tokens.input, 0),
      output: tasks.reduce((sum, t) => sum + t.tokens.output, 0),
    },
    seconds: round(seconds),
  };
}
