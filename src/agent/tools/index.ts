/** The eight tools of SPEC §7, in the order they are offered to the model. */
import { type AgentTool, type ToolContext, ToolError } from '../types.ts';
import { deleteFile } from './delete_file.ts';
import { editFile } from './edit_file.ts';
import { finish } from './finish.ts';
import { listFiles } from './list_files.ts';
import { moveFile } from './move_file.ts';
import { readFile } from './read_file.ts';
import { search } from './search.ts';
import { writeFile } from './write_file.ts';

export const AGENT_TOOLS: readonly AgentTool[] = [
  listFiles,
  readFile,
  search,
  writeFile,
  editFile,
  deleteFile,
  moveFile,
  finish,
];

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

/** Parses the input and runs the tool: the text for the model, or a ToolError for a recoverable mistake. */
export async function runTool<Input>(
  tool: AgentTool<Input>,
  input: unknown,
  context: ToolContext,
): Promise<string> {
  return tool.execute(parseToolInput(tool, input), context);
}

export { deleteFile, editFile, finish, listFiles, moveFile, readFile, search, writeFile };
