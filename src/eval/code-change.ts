import type { CodeChange } from './repositories.ts';

/** Most characters of a code diff put into an instruction (the job's prompt has a limit too). */
export const MAX_CHANGE_DIFF_CHARS = 60_000;

/** What the job of a task is created with (the v2 create body). */
export interface JobRequest {
  prompt: string;
}

/**
 * Gives the job of a task its code change: the change's title and description, and the diff of
 * the code repository from base to head.
 *
 * TODO(SPEC §16): context repositories and a job's `changes` do not exist yet, so for now the
 * change travels in the instruction text, and the agent sees only the diff, not the code around
 * it. Once §16 lands, replace the body of this function: add the code repository (`code.dir`)
 * to the task's project as the context repository named `code`, return the instruction
 * unchanged as `prompt` with `changes: [{ repository: 'code', range: `${code.base}..${code.head}` }]`
 * (the title and description then come from the change itself, as a pull request's would), and
 * drop MAX_CHANGE_DIFF_CHARS.
 */
export function attachCodeChange(
  instruction: string,
  change: { title: string; description: string } | null,
  code: CodeChange | null,
): JobRequest {
  if (!change && !code) return { prompt: instruction };
  const parts = [instruction, '', '<code_change>'];
  if (change) {
    parts.push(`Title: ${change.title}`);
    if (change.description.trim()) parts.push('Description:', change.description.trim());
  }
  if (code) {
    let diff = code.diff;
    if (diff.length > MAX_CHANGE_DIFF_CHARS) {
      const cut = diff.lastIndexOf('\n', MAX_CHANGE_DIFF_CHARS) + 1;
      diff = `${diff.slice(0, cut)}[the diff goes on for ${diff.length - cut} more characters]\n`;
    }
    parts.push('', 'Diff of the code repository:', '<diff>', diff.trimEnd(), '</diff>');
  }
  parts.push('</code_change>');
  return { prompt: parts.join('\n') };
}
