import { ToolError } from './types.ts';

/**
 * Stops a tool call that has run past its deadline (`ToolContext.deadline`). Long loops (walks,
 * searches, suggestions) call it between items, so that a call on a huge tree ends with a
 * message the model can act on instead of running on.
 */
export function checkDeadline(deadline: number | undefined): void {
  if (deadline !== undefined && Date.now() > deadline) {
    throw new ToolError(
      'This tool call ran out of time and was stopped. Narrow it: a smaller path, a glob, or a more specific pattern.',
    );
  }
}
