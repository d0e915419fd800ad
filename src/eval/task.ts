/**
 * A task of `docwright eval` (docs/evaluation.mdx): an instruction, the docs repository it applies to, an
 * optional code change, what is expected (a patch or no change), and how the result is checked.
 * Tasks come from a suite folder (src/eval/suite.ts), the built-in suite or DogBench files
 * (src/eval/dogbench.ts); all of them end up as a `Task`, or as an `InvalidTask` that says which
 * file is wrong and why.
 */
import { RE2JS } from 're2js';
import { z } from 'zod';
import { fieldErrors, fieldSummary, globPattern, relativePath } from '../validation.ts';
import type { DogBenchCriterion } from './dogbench-rubric.ts';
import type { Rubric } from './rubric.ts';
import type { Expected, Priority, Scoring } from './score.ts';

export const CHECK_TYPES = ['changed', 'unchanged', 'contains', 'not-contains', 'valid'] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

/** A deterministic check of task.json. Paths are relative to the docs repository's root. */
export interface Check {
  type: CheckType;
  /** A path or glob; for contains/not-contains without it, the added lines of the whole diff. */
  path?: string;
  /** A regular expression (RE2 syntax; `^` and `$` match at line ends). */
  pattern?: string;
  priority: Priority;
  scoring: Scoring;
  /** A deduction's points (default: its priority's points × 10). */
  points?: number;
}

/**
 * Where a tree of files comes from: folders laid over each other (later ones win), then patches
 * applied in order (the built-in suite's tasks are patches to one product); or a commit of a
 * local git repository, with `paths` taken from another commit (`from`: DogBench's code head is
 * its base plus the paths of the change).
 */
export type Tree =
  | { kind: 'folders'; dirs: string[]; patches?: string[] }
  | { kind: 'commit'; repository: string; commit: string; from?: { commit: string; paths: string[] } };

export interface Task {
  id: string;
  /** Where the task is defined, for messages: a folder, or `items.jsonl:3`. */
  origin: string;
  instruction: string;
  expected: Expected;
  /** The project's docsDir in the docs repository ('.' = its root). */
  docsDir: string;
  /** Globs the agent may write (default: the project default). */
  writable?: string[];
  /** Paths the agent may never write (DogBench: code its change touched in the docs repository). */
  readOnly?: string[];
  /** The code change's pull request title and description, when the task has one. */
  change: { title: string; description: string } | null;
  /** The docs repository's base tree. */
  docs: Tree;
  /** The code change: the code repository before and after it. */
  code: { base: Tree; head: Tree } | null;
  checks: Check[];
  /** The judge's criteria (rubric.md), or null when the task has none. */
  rubric: Rubric | null;
  /** A DogBench item: scored by DogBench's formula and judge (dogbench-score.ts), not by `checks`. */
  dogbench?: { rubric: string | null; criteria: DogBenchCriterion[] | null };
}

/** A task that cannot run: `error` names its file and the problem. */
export interface InvalidTask {
  id: string;
  origin: string;
  error: string;
  /** What the task expects when that much can be read (the report says it), else null. */
  expected: Expected | null;
}

export const isInvalid = (task: Task | InvalidTask): task is InvalidTask => 'error' in task;

const PRIORITIES = ['P0', 'P1', 'P2'] as const;
export const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Longest pattern accepted (RE2 programs grow with it). */
const MAX_PATTERN_CHARS = 1_000;

/** Compiles a check's pattern; RE2 matches in time linear in the text, whatever the pattern. */
export function compilePattern(pattern: string): RE2JS {
  if (pattern.length > MAX_PATTERN_CHARS) throw new Error(`longer than ${MAX_PATTERN_CHARS} characters`);
  return RE2JS.compile(pattern, RE2JS.MULTILINE);
}

const check = z
  .strictObject({
    type: z.enum(CHECK_TYPES),
    path: globPattern().optional(),
    pattern: z
      .string()
      .min(1)
      .superRefine((value, ctx) => {
        try {
          compilePattern(value);
        } catch (error) {
          const reason = (error as Error).message.replace(/^error parsing regexp: /, '');
          ctx.addIssue({ code: 'custom', message: `invalid regular expression (RE2 syntax): ${reason}` });
        }
      })
      .optional(),
    priority: z.enum(PRIORITIES),
    scoring: z.enum(['requirement', 'deduction']),
    points: z.number().min(0).max(100).optional(),
  })
  .superRefine((value, ctx) => {
    const matches = value.type === 'contains' || value.type === 'not-contains';
    if (matches && value.pattern === undefined)
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: `is required for a ${value.type} check` });
    if (!matches && value.pattern !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['pattern'],
        message: 'applies only to contains and not-contains checks',
      });
    if (value.points !== undefined && value.scoring !== 'deduction')
      ctx.addIssue({
        code: 'custom',
        path: ['points'],
        message: "applies only to deductions (a requirement's points come from its priority)",
      });
  });

/** task.json (docs/evaluation.mdx); unknown fields are refused, so that a misspelt one is caught. */
const taskJson = z
  .strictObject({
    id: z.string().regex(TASK_ID, 'must be letters, digits, ".", "_" or "-" (at most 100)'),
    instruction: z.string().trim().min(1).max(50_000),
    expected: z.enum(['patch', 'no-changes']),
    docsDir: relativePath().optional(),
    change: z
      .strictObject({ title: z.string().trim().min(1).max(500), description: z.string().max(50_000) })
      .optional(),
    checks: z.array(check).max(200),
  })
  .superRefine((value, ctx) => {
    if (value.expected === 'patch' && value.checks.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['checks'],
        message: 'a patch task needs at least one check (with none, any result would score 100)',
      });
  });

export type TaskJson = z.output<typeof taskJson>;

/**
 * What a task.json says it expects, read on its own: a task that is invalid for another reason
 * still reports its kind. Null when the text is not JSON or names no kind.
 */
export function expectedOf(text: string): Expected | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const expected = (value as { expected?: unknown } | null)?.expected;
  return expected === 'patch' || expected === 'no-changes' ? expected : null;
}

/** Parses the text of a task.json; throws an Error whose message lists every problem. */
export function parseTaskJson(text: string): TaskJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`invalid JSON: ${(error as Error).message}`);
  }
  const parsed = taskJson.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new Error(fieldSummary(fieldErrors(parsed.error)));
}
