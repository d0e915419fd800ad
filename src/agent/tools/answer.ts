import { z } from 'zod';
import { ToolError } from '../types.ts';
import type { Workspace } from '../workspace.ts';
import { readText } from './read_file.ts';
import { splitLines } from './shared.ts';
import type { AgentTool } from './tool.ts';

/** Longest answer, in characters: it is stored on the job and shown on every surface. */
export const MAX_ANSWER_CHARS = 20_000;
/** Most citations one answer may give. */
export const MAX_CITATIONS = 20;
/** Longest cited path. */
const MAX_PATH_CHARS = 1_000;

const citation = z.object({
  path: z
    .string()
    .min(1, 'path must not be empty')
    .max(MAX_PATH_CHARS, `path must be at most ${MAX_PATH_CHARS} characters`)
    .describe(
      'A file you read, as read_file takes it: relative to the repository root, or under _context/<name>/ for a context repository.',
    ),
  startLine: z.number().int().describe('First line cited, 1-based, as read_file numbers it.'),
  endLine: z.number().int().describe('Last line cited (inclusive), at least startLine.'),
});

const parameters = z.object({
  text: z
    .string()
    .trim()
    .min(1, 'text must not be empty')
    .max(MAX_ANSWER_CHARS, `text must be at most ${MAX_ANSWER_CHARS} characters`)
    .describe('The answer, in Markdown: direct, grounded in what you read.'),
  citations: z
    .array(citation)
    .max(MAX_CITATIONS, `at most ${MAX_CITATIONS} citations`)
    .describe(
      'The lines the answer rests on. Each must be a file that exists and lines it has; empty only when nothing you read answers the question.',
    ),
});

type Citation = z.infer<typeof citation>;

export const answer: AgentTool<z.infer<typeof parameters>> = {
  name: 'answer',
  description:
    'Answer the question and end the run. Cite the files and lines your answer rests on; each citation is checked (the file exists, the lines are in it), and a wrong one comes back as an error to correct. Call it once, last.',
  parameters,
  async execute({ text, citations }, { workspace }) {
    const checked: Citation[] = [];
    const problems: string[] = [];
    const lineCounts = new Map<string, Promise<{ relative: string; lines: number }>>();
    for (const [index, cited] of citations.entries()) {
      const where = `citations[${index}] (${cited.path}:${cited.startLine}-${cited.endLine})`;
      try {
        const file = await lineCountOf(cited.path, workspace, lineCounts);
        const problem = rangeProblem(cited, file.lines);
        if (problem) problems.push(`${where}: ${problem}`);
        else checked.push({ ...cited, path: file.relative });
      } catch (error) {
        if (!(error instanceof ToolError)) throw error;
        problems.push(`${where}: ${error.message}`);
      }
    }
    if (problems.length > 0) {
      throw new ToolError(
        `The answer was not accepted; correct these citations (read the files to find the right lines) and call answer again:\n${problems.map((p) => `- ${p}`).join('\n')}`,
      );
    }
    workspace.answered = { text, citations: checked };
    return `Answered, with ${checked.length} citation${checked.length === 1 ? '' : 's'}.`;
  },
};

/** Each file is read once per call, however often it is cited. */
function lineCountOf(
  path: string,
  workspace: Workspace,
  cache: Map<string, Promise<{ relative: string; lines: number }>>,
): Promise<{ relative: string; lines: number }> {
  let counted = cache.get(path);
  if (!counted) {
    counted = readText(path, workspace).then(({ relative, text }) => ({
      relative,
      lines: splitLines(text).length,
    }));
    cache.set(path, counted);
  }
  return counted;
}

/** What is wrong with a cited range of a file of `lines` lines, or null. */
function rangeProblem({ startLine, endLine }: Citation, lines: number): string | null {
  if (startLine < 1) return `startLine must be at least 1, not ${startLine}`;
  if (endLine < startLine) return `endLine ${endLine} is before startLine ${startLine}`;
  if (endLine > lines) {
    return `the file has ${lines} line${lines === 1 ? '' : 's'}, so endLine ${endLine} is past its end`;
  }
  return null;
}
