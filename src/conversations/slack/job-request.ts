/**
 * The job a Slack mention asks for, as the job service's create body. A mention that is a
 * question (it ends with `?`) becomes an ask job (docs/questions.mdx): answered in the thread,
 * nothing changed.
 */
import { isQuestion } from './mentions.ts';

/** The create body of the job `prompt` starts. */
export function createBodyFor(prompt: string): { prompt: string; mode?: 'ask' } {
  return isQuestion(prompt) ? { prompt, mode: 'ask' } : { prompt };
}
