import { z } from 'zod';
import { CONTEXT_DIR, codeError, codeTarget, contextNames, DOCS_REPOSITORY, mergePaths } from '../code.ts';
import { ToolError } from '../types.ts';
import { globFilter } from './shared.ts';
import type { AgentTool, ToolContext } from './tool.ts';

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
  description: `List the files under a directory of the repository, recursively, sorted, one repository-relative path per line. Skips .git, node_modules and files ignored by .gitignore. Shows at most ${MAX_LIST_ENTRIES} paths; narrow a long listing with \`path\` or \`glob\`. Code of context repositories, when the project has any, is under ${CONTEXT_DIR}/<name>/ (read-only).`,
  parameters,
  async execute({ path = '.', glob }, context) {
    const { workspace } = context;
    const code = workspace.code;
    const target = codeTarget(path, workspace.docsDir, code);
    const where = target.relative === '.' ? 'the repository' : `"${target.relative}"`;
    let files: string[];
    let total: number;
    let stoppedEarly = false;
    if (target.where === 'workspace') {
      const base = workspace.locate(path).relative;
      const walked = workspace.walk(base);
      files = glob ? walked.files.filter(globFilter(glob, base)) : walked.files;
      total = files.length;
      stoppedEarly = walked.truncated;
    } else if (target.where === 'context-root') {
      // Every context repository's files, under their folders.
      files = [];
      total = 0;
      for (const name of contextNames(code)) {
        const listed = await listCode(context, name, '.', glob, `${CONTEXT_DIR}/${name}/`);
        files.push(...listed.files);
        total += listed.total;
      }
    } else if (target.where === 'code') {
      const listed = await listCode(context, target.repository, target.path, glob, target.shown);
      if (!listed.exists)
        throw new ToolError(
          `No such file or directory: "${target.relative}". Use list_files to see what exists.`,
        );
      ({ files, total } = listed);
    } else {
      // An ancestor of docsDir: the documentation from the checkout, the rest of the code from git.
      const docs = workspace.docsDir;
      let walked: string[] = [];
      try {
        const result = workspace.walk(docs);
        walked = result.files;
        stoppedEarly = result.truncated;
      } catch (error) {
        if (!(error instanceof ToolError)) throw error;
      }
      if (glob) walked = walked.filter(globFilter(glob, target.relative));
      const listed = await listCode(context, DOCS_REPOSITORY, target.relative, glob, '', docs);
      files = mergePaths(walked, listed.files);
      total = walked.length + listed.total;
    }
    const footer =
      target.relative === '.' && contextNames(code).length > 0
        ? [
            `(Context repositories, read-only: ${contextNames(code)
              .map((n) => `${CONTEXT_DIR}/${n}/`)
              .join(', ')})`,
          ]
        : [];
    if (files.length === 0) {
      return [glob ? `No files under ${where} match "${glob}".` : `No files under ${where}.`, ...footer].join(
        '\n',
      );
    }
    const lines = files.slice(0, MAX_LIST_ENTRIES);
    if (total > lines.length) {
      lines.push(`… ${total - lines.length} more; narrow with path/glob.`);
    } else if (stoppedEarly) {
      lines.push('… the listing stopped early; narrow with path/glob.');
    }
    return [...lines, ...footer].join('\n');
  },
};

/** A repository's files under `path`, shown under `shown`. */
async function listCode(
  { workspace }: ToolContext,
  repository: string,
  path: string,
  glob: string | undefined,
  shown: string,
  exclude?: string,
): Promise<{ files: string[]; total: number; exists: boolean }> {
  if (glob) globFilter(glob, path); // a bad glob is the model's to fix, before any request
  try {
    const listed = await workspace.code!.reader.list(repository, path, {
      ...(glob === undefined ? {} : { glob }),
      ...(exclude === undefined ? {} : { exclude }),
      max: MAX_LIST_ENTRIES,
    });
    return { ...listed, files: listed.files.map((f) => `${shown}${f}`) };
  } catch (error) {
    throw codeError(`list "${shown}${path === '.' ? '' : path}"`, error);
  }
}
