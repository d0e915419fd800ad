/**
 * Stage 5 of an ask run, in place of publish (docs/questions.mdx): the answer and its citations
 * are the outcome, and nothing is committed, pushed or opened. The answer is published on the
 * job, so it is scrubbed of every secret the run knows, like the transcript.
 */
import type { AgentResult } from '../agent/types.ts';
import { answerSummary } from '../jobs/job-mode.ts';
import { redactDeep } from '../redact.ts';
import type { RunContext } from './run-context.ts';
import type { RunOutcome } from './runner.ts';
import type { Resolved } from './stage-resolve.ts';

export function answerStage(ctx: RunContext, resolved: Resolved, result: AgentResult): RunOutcome {
  const { redact } = ctx;
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
    ...(ctx.run.changes.length > 0 && { changes: redactDeep(resolved.jobChanges, redact) }),
  };
}
