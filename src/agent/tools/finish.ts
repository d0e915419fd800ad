import { z } from 'zod';
import type { AgentTool } from './tool.ts';

/** Longest title finish accepts (it becomes a commit subject). */
export const MAX_TITLE_CHARS = 100;

const parameters = z.object({
  title: z
    .string()
    .trim()
    .min(1, 'title must not be empty')
    .max(MAX_TITLE_CHARS, `title must be at most ${MAX_TITLE_CHARS} characters`)
    .refine((t) => !/[\r\n]/.test(t), 'title must be a single line')
    .describe(
      `One line of at most ${MAX_TITLE_CHARS} characters saying what changed, in the imperative, e.g. "Document the rate limit of the search API". It becomes the commit subject and the pull request title.`,
    ),
  summary: z
    .string()
    .trim()
    .min(1, 'summary must not be empty')
    .max(20_000, 'summary must be at most 20,000 characters')
    .describe('Markdown for the pull request body: what was changed and why, file by file if several.'),
});

export const finish: AgentTool<z.infer<typeof parameters>> = {
  name: 'finish',
  description:
    'End the run once the documentation is updated (or when nothing needs to change, saying why in the summary). Call it exactly once, last. The changes are then validated; if validation fails, you get the errors and can fix them.',
  parameters,
  async execute({ title, summary }, { workspace }) {
    workspace.finished = { title, summary };
    const changed = workspace.changedFiles();
    return changed.length === 0
      ? 'Finished. No files were changed.'
      : `Finished. Changed files:\n${changed.map((f) => `  ${f}`).join('\n')}`;
  },
};
