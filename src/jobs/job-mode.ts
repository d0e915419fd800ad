/**
 * A job's mode (SPEC §20 "Questions", docs/questions.mdx): `edit` changes the documentation and
 * opens a pull request; `ask` answers a question from the docs and the code, with citations,
 * and changes nothing. The AgentJob's `mode`, `answer` and `citations`.
 */
import { z } from 'zod';

export const JOB_MODES = ['edit', 'ask'] as const;
export type JobMode = (typeof JOB_MODES)[number];

export const citationSchema = z.object({
  path: z.string().meta({
    description:
      'A file of the docs repository (repository-relative), or of a context repository under `_context/<name>/`.',
  }),
  startLine: z.number().int().min(1).meta({ description: 'First cited line, 1-based.' }),
  endLine: z
    .number()
    .int()
    .min(1)
    .meta({ description: 'Last cited line (inclusive), at least `startLine`.' }),
});
export type Citation = z.output<typeof citationSchema>;

/** The first line of an answer, cut to this many characters, is the job's `summary`. */
const SUMMARY_CHARS = 200;

/** The short form of an answer that an ask job shows as its `summary`: its first non-empty line. */
export function answerSummary(answer: string): string {
  const first = answer
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '');
  if (!first) return '';
  return first.length <= SUMMARY_CHARS ? first : `${first.slice(0, SUMMARY_CHARS - 1)}…`;
}

export function parseCitations(stored: string | null | undefined): Citation[] {
  return stored ? (JSON.parse(stored) as Citation[]) : [];
}
