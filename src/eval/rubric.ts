/**
 * Rubrics for the judge (`docwright eval --judge`): the criteria a task's result is rated on,
 * each pass/fail, with a priority and a scoring like a check's.
 *
 * rubric.md (a task folder's): every list item that starts with a tag `[P0]`, `[P1]` or `[P2]`,
 * optionally followed by `requirement` (the default) or `deduction`, is a criterion; lines
 * indented under it continue it. Everything else (headings, prose) is guidance the judge reads
 * with every criterion:
 *
 *     # Rubric
 *     Equivalent wording passes.
 *     - [P0] The configuration page documents `--max-url-length` and its default, 2048.
 *     - [P1 deduction] No page still says that URLs of any length are accepted.
 *
 * DogBench rubrics are read as DogBench reads them, in dogbench-rubric.ts.
 */
import type { Priority, Scoring } from './score.ts';

/** A criterion, rated pass/fail by the judge model and counted like a check of its priority. */
export interface Criterion {
  text: string;
  priority: Priority;
  scoring: Scoring;
}

export interface Rubric {
  criteria: Criterion[];
  /** What the rubric says besides its criteria, given to the judge with each of them. */
  guidance: string;
}

const ITEM = /^\s*[-*]\s+\[([^\]\n]*)\](?!\()\s*(.*)$/;
const TAG = /^(P[0-2])(?:\s+(requirement|deduction))?$/;

/** Parses rubric.md; throws an Error naming the line of the first malformed criterion. */
export function parseRubric(text: string): Rubric {
  const criteria: Criterion[] = [];
  const guidance: string[] = [];
  let current: { criterion: Criterion; indent: number } | undefined;
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const item = ITEM.exec(line);
    const tag = item?.[1]?.trim() ?? '';
    if (item && /^p\d/i.test(tag)) {
      const parsed = TAG.exec(tag);
      if (!parsed) {
        throw new Error(
          `line ${index + 1}: "[${tag}]" is not a criterion tag: use [P0], [P1] or [P2], optionally followed by requirement or deduction, e.g. [P1 deduction]`,
        );
      }
      if (!item[2]!.trim()) throw new Error(`line ${index + 1}: the criterion [${tag}] has no text`);
      current = {
        criterion: {
          text: item[2]!.trim(),
          priority: parsed[1] as Priority,
          scoring: (parsed[2] ?? 'requirement') as Scoring,
        },
        indent: line.length - line.trimStart().length,
      };
      criteria.push(current.criterion);
      continue;
    }
    const indent = line.length - line.trimStart().length;
    if (current && line.trim() !== '' && indent > current.indent) {
      current.criterion.text += `\n${line.trim()}`;
      continue;
    }
    current = undefined;
    guidance.push(line);
  }
  if (criteria.length === 0) {
    throw new Error('has no criteria: list items that start with [P0], [P1] or [P2]');
  }
  return { criteria, guidance: guidance.join('\n').trim() };
}
