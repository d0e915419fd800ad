/**
 * A DogBench rubric as DogBench's own judge reads it (its `criterion_blocks`): a criterion starts
 * at a line `## C1 — …` (any heading level 2–6, or `1. **C1: …`) and runs to the next one; each
 * carries `**Priority:** P0`–`P3`, `**Category:** …` and `**Scoring:** requirement | conditional
 * | deduction_only`. Nothing is mapped onto docwright's priorities or scorings: the score is
 * DogBench's (dogbench-score.ts).
 */

export type DogBenchScoring = 'requirement' | 'conditional' | 'deduction_only';

export interface DogBenchCriterion {
  /** `C1`, `C2a`… */
  id: string;
  /** The criterion's whole block, as the judge reads it. */
  text: string;
  priority: 'P0' | 'P1' | 'P2' | 'P3';
  category: string;
  scoring: DogBenchScoring;
}

const CRITERION = /^(?:#{2,6}\s+|\d+\.\s+\*\*)(C\d+[A-Za-z]?)\s*(?:[—–-]|:)\s+/gm;
const PRIORITY = /^\s*\*\*Priority:\*\*\s*(P[0-3])\b/m;
const CATEGORY = /\*\*Category:\*\*\s*([^|\n]+)/;
const SCORING = /\*\*Scoring:\*\*\s*(requirement|conditional|deduction[_ -]only)\b/i;

/** The rubric's criteria in order; throws an Error naming the first criterion it cannot read. */
export function dogbenchCriteria(rubric: string): DogBenchCriterion[] {
  const starts = [...rubric.matchAll(CRITERION)];
  const criteria: DogBenchCriterion[] = [];
  const seen = new Set<string>();
  for (const [index, match] of starts.entries()) {
    const id = match[1]!;
    const end = starts[index + 1]?.index ?? rubric.length;
    const block = rubric.slice(match.index, end);
    const priority = PRIORITY.exec(block)?.[1];
    const category = CATEGORY.exec(block)?.[1]?.trim();
    const scoring = SCORING.exec(block)?.[1];
    if (!priority || !category || !scoring || seen.has(id))
      throw new Error(
        seen.has(id)
          ? `names the criterion ${id} twice`
          : `criterion ${id} lacks **Priority:**, **Category:** or **Scoring:**`,
      );
    seen.add(id);
    criteria.push({
      id,
      text: block.trim(),
      priority: priority as DogBenchCriterion['priority'],
      category,
      scoring: scoring.toLowerCase().replace(/[- ]/g, '_') as DogBenchScoring,
    });
  }
  if (criteria.length === 0) throw new Error('has no criterion headings (## C1 — …)');
  return criteria;
}
