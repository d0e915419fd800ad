/**
 * The docs repository's pull request template (docs/code-context.mdx), read from the
 * commit a run starts from. The checkout is sparse (only the docs), so the template is read from
 * git's objects, not from the working tree; a partial mirror fetches the one blob on demand.
 */
import { git } from './git.ts';

/** Where hosts look for the default template, in the order docwright tries them. */
export const PULL_REQUEST_TEMPLATE_PATHS = [
  '.github/pull_request_template.md',
  '.github/PULL_REQUEST_TEMPLATE.md',
  'docs/pull_request_template.md',
  '.gitlab/merge_request_templates/Default.md',
] as const;

/** A template is a page of prose and checkboxes; anything longer is not used. */
const MAX_TEMPLATE_BYTES = 20_000;

/**
 * The first template found at `commit`, or null. Reads sizes first (`cat-file --batch-check`) so
 * that a huge file named like a template is never read.
 */
export async function readPullRequestTemplate(
  dir: string,
  commit: string,
  options: { env?: Record<string, string>; signal?: AbortSignal; redact?: (text: string) => string } = {},
): Promise<string | null> {
  const objects = PULL_REQUEST_TEMPLATE_PATHS.map((file) => `${commit}:${file}`);
  const sizes = await git(['cat-file', '--batch-check=%(objecttype) %(objectsize)'], {
    ...options,
    cwd: dir,
    input: `${objects.join('\n')}\n`,
  });
  const lines = sizes.split('\n');
  for (const [index, object] of objects.entries()) {
    const [type, size] = (lines[index] ?? '').split(' ');
    if (type !== 'blob' || Number(size) > MAX_TEMPLATE_BYTES) continue;
    const text = await git(['cat-file', 'blob', object], { ...options, cwd: dir });
    if (text.trim()) return text;
  }
  return null;
}
