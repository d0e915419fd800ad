/** The nine tools of docs/agent.mdx and docs/code-context.mdx (read_change), in the order they are offered to the model. */
import { type AgentMode, ToolError } from '../types.ts';
import { answer } from './answer.ts';
import { deleteFile } from './delete_file.ts';
import { editFile } from './edit_file.ts';
import { finish } from './finish.ts';
import { listFiles } from './list_files.ts';
import { moveFile } from './move_file.ts';
import { readChange } from './read_change.ts';
import { readFile } from './read_file.ts';
import { search } from './search.ts';
import type { AgentTool, ToolContext } from './tool.ts';
import { writeFile } from './write_file.ts';

export const AGENT_TOOLS: readonly AgentTool[] = [
  listFiles,
  readFile,
  search,
  writeFile,
  editFile,
  deleteFile,
  moveFile,
  readChange,
  finish,
];

/** An ask job's tools (docs/questions.mdx): the reading tools and answer, nothing that writes. */
export const ASK_TOOLS: readonly AgentTool[] = [listFiles, readFile, search, readChange, answer];

export const toolsOf = (mode: AgentMode = 'edit'): readonly AgentTool[] =>
  mode === 'ask' ? ASK_TOOLS : AGENT_TOOLS;

/** The tool error for a call of a tool the run does not offer (a write in an ask run, a made-up name). */
export function unknownToolError(name: string, mode: AgentMode = 'edit'): ToolError {
  const offered = toolsOf(mode).map((t) => t.name);
  if (mode === 'ask' && AGENT_TOOLS.some((t) => t.name === name)) {
    return new ToolError(
      `${name} is not available: this run answers a question and changes nothing. The tools are: ${offered.join(', ')}; call answer with your answer and its citations.`,
    );
  }
  return new ToolError(`There is no tool named "${name}". The tools are: ${offered.join(', ')}.`);
}

/** Validates a model's tool input with the tool's schema; a mismatch is a ToolError naming each field. */
export function parseToolInput<Input>(tool: AgentTool<Input>, input: unknown): Input {
  const result = tool.parameters.safeParse(input ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.join('.') : 'input';
    return `${field}: ${issue.message}`;
  });
  throw new ToolError(`Invalid input for ${tool.name}: ${problems.join('; ')}.`);
}

/**
 * Parses the input and runs the tool with its deadline: the text for the model, or a ToolError.
 * Whatever a tool throws becomes a ToolError (docs/agent.mdx: a tool error never ends the job): a
 * file-system refusal (a name too long, permission denied, a full disk) and, for a fault of
 * the tool itself, a message that says so.
 */
export async function runTool<Input>(
  tool: AgentTool<Input>,
  input: unknown,
  context: ToolContext,
): Promise<string> {
  const parsed = parseToolInput(tool, input);
  const deadline = context.deadline ?? Date.now() + context.workspace.limits.maxToolMs;
  try {
    return await tool.execute(parsed, { ...context, deadline });
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw asToolError(error, context.root);
  }
}

const SYSTEM_ERRORS: Record<string, string> = {
  ENAMETOOLONG: 'a file or folder name is too long',
  EACCES: 'permission denied',
  EPERM: 'the operation is not permitted',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is a file, not a directory',
  ELOOP: 'the path goes through a symbolic link',
  EEXIST: 'it already exists',
  ENOTEMPTY: 'the directory is not empty',
  EMFILE: 'too many files are open',
  EROFS: 'the file system is read-only',
  EINVAL: 'the path is not valid here',
};

/** A tool failure that is not a ToolError, as the model should see it (paths repository-relative). */
function asToolError(error: unknown, root: string): ToolError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const relativePath = (error as NodeJS.ErrnoException | null)?.path;
  const where =
    typeof relativePath === 'string' && relativePath.startsWith(root)
      ? ` (${relativePath.slice(root.length + 1) || '.'})`
      : '';
  if (typeof code === 'string' && code in SYSTEM_ERRORS) {
    return new ToolError(
      `The file system refused this: ${SYSTEM_ERRORS[code]}${where}. Try another path or approach.`,
    );
  }
  if (error instanceof RangeError) {
    return new ToolError('The result would be too large to handle. Work on smaller pieces.');
  }
  const message = error instanceof Error ? error.message.split(root).join('.') : String(error);
  return new ToolError(`The tool failed unexpectedly (${message.slice(0, 300)}). Try another approach.`);
}

export { answer, deleteFile, editFile, finish, listFiles, moveFile, readChange, readFile, search, writeFile };
