/**
 * The instruction of a DogBench item (SPEC §18 `--dogbench`): DogBench's registered prompt, so
 * that docwright's figures stand beside its published ones. Its published text (Apache-2.0,
 * © Promptless: `prompts.py`, the documentation task and the local patch prompts) is kept word
 * for word; the code change is named by its pull request URL and framed by its real title and
 * description, as DogBench's prepared inputs frame it.
 */

const DOCUMENTATION_TASK_INSTRUCTION =
  "You are responsible for maintaining this project's user-facing documentation.\n\n" +
  'Review the provided code change or task request, then inspect the existing documentation to determine whether users need any documentation updates.\n\n' +
  '- If no user-facing documentation update is warranted, return `NO_DOC_CHANGES_NEEDED` and briefly explain why.\n' +
  '- If an update is warranted, make the necessary changes in the documentation workspace.';

const LOCAL_PATCH_OUTPUT_INSTRUCTION = 'For this run, the documentation workspace is the current checkout.';

/** The change's title and description (DogBench's "frozen change framing"). */
function framing(change: { title: string; description: string } | null): string {
  if (!change?.title.trim()) return '';
  const description = change.description.trim();
  return `\n\nFrozen change framing:\nTitle: ${change.title.trim()}${description ? `\nDescription: ${description}` : ''}`;
}

function additionalContext(context: string): string {
  return context.trim()
    ? `\n\nAdditional context from pre-existing linked issues or pull requests:\n${context.trim()}`
    : '';
}

/** The prompt of an item with a code change: its pull request URL, its framing, the item's context. */
export function dogbenchCodePrompt(
  sourceUrl: string,
  change: { title: string; description: string } | null,
  context: string,
): string {
  return `${DOCUMENTATION_TASK_INSTRUCTION}\n\nProvided code change: ${sourceUrl}.${framing(change)}${additionalContext(context)}\n${LOCAL_PATCH_OUTPUT_INSTRUCTION}`;
}

/** The prompt of a docs-only item: its context is the task request. */
export function dogbenchRequestPrompt(context: string): string {
  const request = context.trim() ? `\n\nProvided task request:\n${context.trim()}` : '';
  return `${DOCUMENTATION_TASK_INSTRUCTION}${request}\n${LOCAL_PATCH_OUTPUT_INSTRUCTION}`;
}
