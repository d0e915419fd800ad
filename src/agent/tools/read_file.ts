import { z } from 'zod';
import { type CodeFile, codeError, codeTarget } from '../code.ts';
import { formatBytes } from '../format.ts';
import { ToolError } from '../types.ts';
import type { Workspace } from '../workspace.ts';
import { cutLine, decodeText, MAX_LINE_CHARS, MAX_OUTPUT_BYTES, numbered, splitLines } from './shared.ts';
import type { AgentTool } from './tool.ts';

/** Lines read_file shows when no limit is given. */
export const DEFAULT_READ_LINES = 2000;

const parameters = z.object({
  path: z.string().describe('File to read, relative to the repository root, e.g. "docs/quickstart.mdx".'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based line number to start from. Default: 1. Use it to continue a long file.'),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`How many lines to show. Default: ${DEFAULT_READ_LINES}.`),
});

export const readFile: AgentTool<z.infer<typeof parameters>> = {
  name: 'read_file',
  description: `Read a text file. Each line is shown as its line number, a tab, then the line ("     1\\tline"); the number and the tab are not part of the file, so never copy them into edit_file. Shows up to ${DEFAULT_READ_LINES} lines and ${MAX_OUTPUT_BYTES / 1024} KB at a time, cuts lines longer than ${MAX_LINE_CHARS} characters, and says which offset to use to continue. A file must be read before it is edited or overwritten.`,
  parameters,
  async execute({ path, offset = 1, limit = DEFAULT_READ_LINES }, { workspace }) {
    const { relative, text } = await readText(path, workspace);
    return showLines(relative, text, offset, limit);
  },
};

/**
 * A text file as read_file reads it, from the checkout or from the code (docs/code-context.mdx):
 * its normalised path and text, or a ToolError saying why not. The answer tool checks its
 * citations with it, so that what can be cited is exactly what can be read.
 */
export async function readText(
  path: string,
  workspace: Workspace,
): Promise<{ relative: string; text: string }> {
  const target = codeTarget(path, workspace.docsDir, workspace.code);
  if (target.where === 'workspace') {
    const file = workspace.readFile(path);
    const text = decodeText(file.relative, file.bytes);
    workspace.markRead(file.relative, file.bytes);
    return { relative: file.relative, text };
  }
  if (target.where !== 'code') {
    throw new ToolError(`"${target.relative}" is a directory; use list_files to see what it holds.`);
  }
  let file: CodeFile;
  try {
    file = await workspace.code!.reader.read(target.repository, target.path);
  } catch (error) {
    throw codeError(`read "${target.relative}"`, error);
  }
  if (file.kind === 'missing') {
    throw new ToolError(
      `File not found: ${target.relative}. Use list_files or search to see which files exist.`,
    );
  }
  if (file.kind === 'directory') {
    throw new ToolError(`"${target.relative}" is a directory; use list_files to see what it holds.`);
  }
  if (file.kind === 'too-large') {
    throw new ToolError(
      `"${target.relative}" is ${formatBytes(file.size)}, over the limit of ${formatBytes(workspace.limits.maxFileBytes)}; use search to find the lines you need.`,
    );
  }
  return { relative: target.relative, text: decodeText(target.relative, Buffer.from(file.bytes)) };
}

/** The numbered lines from `offset`, bounded, with a hint how to continue. */
function showLines(relative: string, text: string, offset: number, limit: number): string {
  const lines = splitLines(text);
  if (lines.length === 0) return `(${relative} is empty)`;
  if (offset > lines.length) {
    throw new ToolError(
      `offset ${offset} is past the end of ${relative}, which has ${lines.length} line${lines.length === 1 ? '' : 's'}.`,
    );
  }
  const out: string[] = [];
  let bytes = 0;
  let last = offset - 1;
  const end = Math.min(lines.length, offset - 1 + limit);
  for (let i = offset - 1; i < end; i++) {
    const entry = numbered(i + 1, cutLine(lines[i]!));
    const size = Buffer.byteLength(entry) + 1;
    if (bytes + size > MAX_OUTPUT_BYTES && out.length > 0) break;
    out.push(entry);
    bytes += size;
    last = i + 1;
  }
  if (last < lines.length) {
    out.push('', `(Showing lines ${offset}-${last} of ${lines.length}. Use offset=${last + 1} to continue.)`);
  }
  return out.join('\n');
}
