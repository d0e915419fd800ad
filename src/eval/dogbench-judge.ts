/**
 * The judge of `docwright eval --dogbench --judge M`, working as DogBench's does (its `judge.py`):
 * one call per item with the whole rubric and the patch; every criterion answered once, in the
 * rubric's order, with evidence before verdict; every quote checked to be an exact substring of
 * the patch (whitespace collapsed, the diff's `+` markers dropped); a malformed answer retried with
 * the reason it was refused. The prompt is DogBench's published text (Apache-2.0, © Promptless),
 * kept word for word so that the verdicts are comparable with DogBench's.
 */
import { generateText, tool } from 'ai';
import { z } from 'zod';
import type { Model } from '../agent/model-resolution.ts';
import { withModelRetries } from '../agent/model-retries.ts';
import type { DogBenchCriterion } from './dogbench-rubric.ts';
import type { DogBenchVerdict } from './dogbench-score.ts';

/** Answers tried per item before the item's judging fails (DogBench allows 20; each costs a call). */
export const MAX_JUDGE_ATTEMPTS = 5;
/** How long one answer may take, retries of the provider included. */
const ANSWER_TIME_MS = 10 * 60_000;

const row = z.object({
  id: z.string(),
  scoring_type: z.enum(['requirement', 'conditional', 'deduction_only']),
  triggered: z.boolean().nullable(),
  verdict: z.enum(['pass', 'fail']).nullable(),
  violated: z.boolean().nullable(),
  triggering_patch_quote: z.string().nullable(),
  supporting_patch_quote: z.string().nullable(),
  contradicting_patch_quote: z.string().nullable(),
  missing_requirement: z.string().nullable(),
  reason: z.string(),
});
const answer = z.object({ criteria: z.array(row), summary: z.string() });

const scoreTool = tool({
  description: 'Records the scoring of every criterion, in rubric order, and a one-paragraph summary.',
  inputSchema: answer,
});

export function dogbenchJudgePrompt(rubric: string, patch: string, itemId: string, correction = ''): string {
  return `You are Terra scoring one anonymous documentation patch against one frozen rubric.

Evaluate every criterion exactly once and in rubric order. Evidence precedes verdict. Equivalent
wording counts. Ignore non-English, localized, and translated content entirely; never award or
deduct credit for its presence, absence, correctness, freshness, language, structure, links, or
synchronization. The rubric explicitly declares each criterion as requirement, conditional, or
deduction_only. For a requirement, return verdict Pass or Fail. For a conditional criterion,
decide triggered first; when triggered return Pass or Fail, and when not triggered return a null
verdict. For deduction_only, return violated true only when the patch actually contains the
prohibited content; otherwise return violated false. A not-triggered conditional and a clean
deduction-only guardrail earn no positive credit. Partial and N/A do not exist in this contract.
Never mark a guardrail violated without an exact prohibited patch quote, and never mark a
conditional triggered without an exact activating patch quote.
Do not use outside files, tools, or web research. Return strict JSON only.

For supporting_patch_quote and contradicting_patch_quote, copy a short contiguous substring
verbatim from PATCH; never paraphrase, normalize, or insert ellipses. A failed requirement must
name a missing requirement or quote contradicting text. A violated deduction-only guardrail must
put the exact prohibited text in contradicting_patch_quote. A triggered conditional must put the
exact activating text in triggering_patch_quote; otherwise that field must be null.
${correction}

CELL: ${itemId}
RUBRIC:\n<rubric>\n${rubric}\n</rubric>
PATCH:\n<patch>\n${patch}\n</patch>
`;
}

const CORRECTION =
  "Return a fully corrected result; do not defend the prior output. For evidence quotes, copy the authored text verbatim from the unified diff, omitting only the leading '+' marker; preserve literal backslashes and other punctuation exactly. Never quote rubric, research, repository, or inferred text in a patch-quote field. When a requirement Fail is caused only by omitted required content, set contradicting_patch_quote to null and describe the omission in missing_requirement instead of inventing a contradiction quote. For Pass or a non-violated guardrail, prefer null over any supporting quote you cannot copy exactly from PATCH.";

const collapse = (text: string) => text.split(/\s+/).filter(Boolean).join(' ');

/** The texts a quote may be taken from: the patch, its added lines, and its authored lines. */
function patchViews(patch: string): string[] {
  const lines = patch.split(/\r?\n/);
  const added = lines.filter((l) => l.startsWith('+') && !l.startsWith('+++')).map((l) => l.slice(1));
  const authored = lines
    .filter((l) => (l.startsWith('+') && !l.startsWith('+++')) || (l.startsWith(' ') && !l.startsWith(' @@')))
    .map((l) => l.slice(1));
  const addedView = collapse(added.join('\n'));
  return [collapse(patch), addedView, addedView.replaceAll('\\"', '"'), collapse(authored.join('\n'))];
}

/** Throws an Error saying why an answer is refused (DogBench's `validate_score`). */
export function validateVerdicts(
  rows: readonly DogBenchVerdict[],
  criteria: readonly DogBenchCriterion[],
  patch: string,
): void {
  if (rows.map((r) => r.id).join('\n') !== criteria.map((c) => c.id).join('\n'))
    throw new Error('score must cover every criterion exactly once in rubric order');
  const views = patchViews(patch);
  for (const [index, r] of rows.entries()) {
    const kind = criteria[index]!.scoring;
    const id = r.id;
    if (r.scoring_type !== kind) throw new Error(`${id}: scoring_type does not match rubric metadata`);
    if (kind === 'deduction_only') {
      if (r.triggered !== null || r.verdict !== null || typeof r.violated !== 'boolean')
        throw new Error(`${id}: guardrail requires violated boolean and null verdict`);
      if (r.triggering_patch_quote !== null)
        throw new Error(`${id}: guardrail cannot have a triggering patch quote`);
      if (r.violated && !r.contradicting_patch_quote)
        throw new Error(`${id}: violated guardrail lacks exact prohibited patch quote`);
      if (r.missing_requirement) throw new Error(`${id}: guardrail cannot be failed for omitted content`);
    } else if (kind === 'requirement') {
      if (r.triggered !== null || r.verdict === null || r.violated !== null)
        throw new Error(`${id}: requirement requires Pass/Fail only`);
      if (r.triggering_patch_quote !== null)
        throw new Error(`${id}: requirement cannot have a triggering patch quote`);
    } else {
      if (typeof r.triggered !== 'boolean' || r.violated !== null)
        throw new Error(`${id}: conditional requires triggered boolean`);
      if (r.triggered && r.verdict === null)
        throw new Error(`${id}: triggered conditional requires Pass/Fail`);
      if (!r.triggered && r.verdict !== null)
        throw new Error(`${id}: untriggered conditional requires null verdict`);
      if (r.triggered && !r.triggering_patch_quote)
        throw new Error(`${id}: triggered conditional lacks exact activating patch quote`);
      if (!r.triggered && r.triggering_patch_quote !== null)
        throw new Error(`${id}: untriggered conditional cannot have a triggering quote`);
    }
    if (
      kind !== 'deduction_only' &&
      r.verdict === 'fail' &&
      !(r.contradicting_patch_quote || r.missing_requirement)
    )
      throw new Error(`${id}: fail lacks contradiction or missing requirement`);
    for (const field of [
      'triggering_patch_quote',
      'supporting_patch_quote',
      'contradicting_patch_quote',
    ] as const) {
      const quote = r[field];
      if (quote && !views.some((view) => view.includes(collapse(quote))))
        throw new Error(`${id}: ${field} is not an exact patch quote`);
    }
  }
}

export interface DogBenchJudgment {
  verdicts: DogBenchVerdict[];
  summary: string;
  attempts: number;
  usage: { input: number; output: number };
}

/** Scores one item's patch; throws when no answer passes validation in MAX_JUDGE_ATTEMPTS. */
export async function judgeDogBenchItem(
  model: Model,
  input: {
    itemId: string;
    rubric: string;
    criteria: DogBenchCriterion[];
    patch: string;
    signal: AbortSignal;
  },
): Promise<DogBenchJudgment> {
  const usage = { input: 0, output: 0 };
  let correction = '';
  let last = 'no answer';
  for (let attempt = 1; attempt <= MAX_JUDGE_ATTEMPTS; attempt++) {
    const result = await withModelRetries(
      (signal) =>
        generateText({
          model,
          messages: [
            {
              role: 'user',
              content: dogbenchJudgePrompt(input.rubric, input.patch, input.itemId, correction),
            },
          ],
          tools: { score: scoreTool },
          toolChoice: { type: 'tool', toolName: 'score' },
          maxRetries: 0,
          maxOutputTokens: 16_384,
          abortSignal: signal,
        }),
      { signal: input.signal, deadline: Date.now() + ANSWER_TIME_MS },
    );
    usage.input += result.usage.inputTokens ?? 0;
    usage.output += result.usage.outputTokens ?? 0;
    try {
      const call = result.toolCalls.find((c) => c.toolName === 'score');
      if (!call) throw new Error('the answer called no score tool');
      const parsed = answer.safeParse(call.input);
      if (!parsed.success)
        throw new Error(`the answer is not the score's shape: ${parsed.error.issues[0]?.message}`);
      validateVerdicts(parsed.data.criteria, input.criteria, input.patch);
      return { verdicts: parsed.data.criteria, summary: parsed.data.summary, attempts: attempt, usage };
    } catch (error) {
      last = (error as Error).message;
      correction = `CORRECTION FROM THE PREVIOUS REJECTED ATTEMPT: ${last}. ${CORRECTION}`;
    }
  }
  throw new Error(`the judge gave no valid score in ${MAX_JUDGE_ATTEMPTS} attempts: ${last}`);
}
