/**
 * The job a Slack mention asks for, as the job service's create body. A mention that is a
 * question becomes an ask job (SPEC §20 "Questions").
 */
import { isQuestion } from './mentions.ts';

/** The create body of the job `prompt` starts. */
export function createBodyFor(prompt: string): { prompt: string; mode?: 'ask' } {
  // ─── LEAD, AT MERGE ──────────────────────────────────────────────────────────────────────────
  // The job service's create input gains `mode: 'ask'` in another branch. Until it does, its
  // create body refuses unknown fields, so the mode is not sent. Once merged, replace the next
  // line with:   return isQuestion(prompt) ? { prompt, mode: 'ask' } : { prompt };
  // (test/slack/mentions.test.ts already covers isQuestion; test/slack/events.test.ts the body.)
  return isQuestion(prompt) && ASK_MODE_WIRED ? { prompt, mode: 'ask' } : { prompt };
  // ─────────────────────────────────────────────────────────────────────────────────────────────
}

/** Set to true (or remove) once the job service accepts `mode` (see above). */
export const ASK_MODE_WIRED = false;
