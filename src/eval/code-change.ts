/**
 * How a task's job gets its code change: as a job documenting a change does in production
 * (docs/code-context.mdx). The task's code repository becomes the project's context repository
 * `code`, and the job names the change's head commit, whose message carries the change's title
 * and description as a pull request's would. The agent then sees the change's brief, reads its
 * diff with `read_change`, and reads the code at its head under `_context/code/`.
 */
import type { ChangeInput } from '../jobs/changes.ts';
import type { CodeChange } from './repositories.ts';

/** The context repository a task's code change lives in. */
export const CODE_REPOSITORY = 'code';

/** What the job of a task is created with (the v2 create body). */
export interface JobRequest {
  prompt: string;
  changes?: ChangeInput[];
}

/** The commit message of a change's head: its title, then its description. */
export function changeMessage(change: { title: string; description: string } | null): string {
  if (!change) return 'Code change';
  return change.description.trim() ? `${change.title}\n\n${change.description.trim()}\n` : change.title;
}

export function jobRequest(instruction: string, code: CodeChange | null): JobRequest {
  if (!code) return { prompt: instruction };
  return { prompt: instruction, changes: [{ repository: CODE_REPOSITORY, commit: code.head }] };
}
