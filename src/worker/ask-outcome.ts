/**
 * How an ask run ends (docs/questions.mdx): the answer and its citations are the outcome, and
 * nothing is committed, pushed or opened. The answer is published on the job, so it is scrubbed
 * of every secret the run knows, like the transcript.
 */
import type { AgentResult } from '../agent/types.ts';
import type { JobChange } from '../jobs/changes.ts';
import { answerSummary } from '../jobs/job-mode.ts';
import type { RunOutcome } from '../jobs/run-outcome.ts';
import { redactDeep } from '../redact.ts';

export function askOutcome(
  result: AgentResult,
  redact: (text: string) => string,
  /** The changes the run resolved, when the job names any. */
  changes: JobChange[] | undefined,
): RunOutcome {
  if (!result.answer) {
    // The agent's loop returns from an ask run only with an answer; this is a guard, not a path.
    return { status: 'failed', error: { code: 'no-answer', message: 'the run ended without an answer' } };
  }
  const text = redact(result.answer.text);
  return {
    status: 'completed',
    prLink: null,
    branch: null,
    summary: answerSummary(text),
    answer: { text, citations: redactDeep(result.answer.citations, redact) },
    ...(changes && { changes: redactDeep(changes, redact) }),
  };
}
