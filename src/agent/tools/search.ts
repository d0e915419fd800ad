import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { type AgentTool, ToolError } from '../types.ts';
import { formatBytes } from '../workspace.ts';
import { globFilter, isBinary, plural } from './shared.ts';

/** Most matching lines search shows. */
export const MAX_SEARCH_MATCHES = 200;
/** Longest line search shows before cutting it. */
const MAX_MATCH_LINE_CHARS = 500;

const parameters = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      'JavaScript regular expression matched against each line, e.g. "api[_-]key" or "^## ". Escape special characters (\\\\. \\\\( \\\\[) to match them literally.',
    ),
  path: z
    .string()
    .optional()
    .describe(
      'Directory (or file) to search, relative to the repository root. Default: "." (the whole repository).',
    ),
  glob: z
    .string()
    .optional()
    .describe(
      'Only search files matching this glob, relative to `path`, e.g. "**/*.mdx". A glob without "/" such as "*.mdx" matches file names at any depth.',
    ),
  ignore_case: z.boolean().optional().describe('Match without regard to case. Default: false.'),
});

export const search: AgentTool<z.infer<typeof parameters>> = {
  name: 'search',
  description: `Search file contents with a regular expression, line by line. Returns matching lines as "path:line: text", sorted by path then line, at most ${MAX_SEARCH_MATCHES}, with a count of the rest. Skips binary files, .git, node_modules and files ignored by .gitignore. Use it to find every page that mentions something before editing.`,
  parameters,
  async execute({ pattern, path: dir = '.', glob, ignore_case = false }, { workspace }) {
    const regex = compile(pattern, ignore_case);
    // Without lookarounds, a line matches only if the whole (LF) text does: test the file once first.
    const prefilter = !/\(\?<?[=!]/.test(pattern);
    const base = workspace.locate(dir).relative;
    const walked = workspace.walk(base);
    const wanted = glob ? globFilter(glob, base) : null;
    const max = workspace.limits.maxFileBytes;
    const shown: string[] = [];
    let total = 0;
    let filesMatched = 0;
    let tooLarge = 0;
    for (const file of walked.files) {
      if (wanted && !wanted(file)) continue;
      const bytes = readUpTo(path.join(workspace.root, file), max);
      if (bytes === null) continue;
      if (bytes === 'too-large') {
        tooLarge++;
        continue;
      }
      if (isBinary(bytes)) continue;
      let text = bytes.toString('utf8');
      if (text.includes('\r')) text = text.split('\r\n').join('\n');
      if (prefilter && !regex.test(text)) continue;
      const lines = text.split('\n');
      let matchedHere = false;
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if (!regex.test(line)) continue;
        matchedHere = true;
        total++;
        if (shown.length < MAX_SEARCH_MATCHES) shown.push(`${file}:${i + 1}: ${cut(line)}`);
      }
      if (matchedHere) filesMatched++;
    }
    const notes: string[] = [];
    if (tooLarge > 0) notes.push(`(${plural(tooLarge, 'file')} over ${formatBytes(max)} not searched.)`);
    if (walked.truncated) notes.push('(The file walk stopped early; narrow with path/glob.)');
    if (total === 0) {
      const where = base === '.' ? '' : ` under "${base}"`;
      const filter = glob ? ` in files matching "${glob}"` : '';
      return [`No matches for /${pattern}/${ignore_case ? 'i' : ''}${where}${filter}.`, ...notes].join('\n');
    }
    if (total > shown.length) {
      shown.push(
        `… ${total - shown.length} more matches (${total} in ${plural(filesMatched, 'file')}); narrow with path, glob or a more specific pattern.`,
      );
    }
    return [...shown, ...notes].join('\n');
  },
};

function compile(pattern: string, ignoreCase: boolean): RegExp {
  const flags = ignoreCase ? 'im' : 'm';
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      throw new ToolError(`${(error as Error).message}. The pattern is a JavaScript regular expression.`);
    }
  }
}

function cut(line: string): string {
  const trimmed = line.trimEnd();
  return trimmed.length > MAX_MATCH_LINE_CHARS ? `${trimmed.slice(0, MAX_MATCH_LINE_CHARS)}…` : trimmed;
}

/** The file's bytes, 'too-large' past `max`, or null when it cannot be read (gone, a link). */
function readUpTo(absolute: string, max: number): Buffer | 'too-large' | null {
  let fd: number;
  try {
    fd = openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    if (size > max) return 'too-large';
    const buffer = Buffer.allocUnsafe(size);
    let offset = 0;
    while (offset < size) {
      const n = readSync(fd, buffer, offset, size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return buffer.subarray(0, offset);
  } finally {
    closeSync(fd);
  }
}
