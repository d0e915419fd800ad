import { z } from 'zod';
import { globFilter } from './shared.ts';
import type { AgentTool } from './tool.ts';

/** Most paths list_files shows at once. */
export const MAX_LIST_ENTRIES = 1000;

const parameters = z.object({
  path: z
    .string()
    .optional()
    .describe(
      'Directory to list, relative to the repository root, e.g. "docs/guides". Default: "." (the whole repository).',
    ),
  glob: z
    .string()
    .optional()
    .describe(
      'Only list files matching this glob, relative to `path`, e.g. "**/*.mdx" or "api/**". A glob without "/" such as "*.mdx" matches file names at any depth.',
    ),
});

export const listFiles: AgentTool<z.infer<typeof parameters>> = {
  name: 'list_files',
  description: `List the files under a directory of the repository, recursively, sorted, one repository-relative path per line. Skips .git, node_modules and files ignored by .gitignore. Shows at most ${MAX_LIST_ENTRIES} paths; narrow a long listing with \`path\` or \`glob\`.`,
  parameters,
  async execute({ path = '.', glob }, { workspace }) {
    const base = workspace.locate(path).relative;
    const walked = workspace.walk(base);
    const files = glob ? walked.files.filter(globFilter(glob, base)) : walked.files;
    const where = base === '.' ? 'the repository' : `"${base}"`;
    if (files.length === 0) {
      return glob ? `No files under ${where} match "${glob}".` : `No files under ${where}.`;
    }
    const lines = files.slice(0, MAX_LIST_ENTRIES);
    if (files.length > MAX_LIST_ENTRIES) {
      lines.push(`… ${files.length - MAX_LIST_ENTRIES} more; narrow with path/glob.`);
    } else if (walked.truncated) {
      lines.push('… the listing stopped early; narrow with path/glob.');
    }
    return lines.join('\n');
  },
};
