import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
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

/** How long the matching may run before it is stopped (a pattern that backtracks catastrophically). */
export const SEARCH_TIMEOUT_MS = 5000;

type Parameters = z.infer<typeof parameters>;

/** The search tool; `timeoutMs` bounds the regular-expression matching. */
export function createSearchTool(timeoutMs = SEARCH_TIMEOUT_MS): AgentTool<Parameters> {
  return {
    name: 'search',
    description: `Search file contents with a regular expression, line by line. Returns matching lines as "path:line: text", sorted by path then line, at most ${MAX_SEARCH_MATCHES}, with a count of the rest. Skips binary files, .git, node_modules and files ignored by .gitignore. Use it to find every page that mentions something before editing.`,
    parameters,
    async execute({ pattern, path: dir = '.', glob, ignore_case = false }, { workspace }) {
      const regex = compile(pattern, ignore_case);
      const base = workspace.locate(dir).relative;
      const walked = workspace.walk(base);
      const wanted = glob ? globFilter(glob, base) : null;
      const max = workspace.limits.maxFileBytes;
      const files: string[] = [];
      const texts: string[] = [];
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
        const text = bytes.toString('utf8');
        files.push(file);
        texts.push(text.includes('\r') ? text.split('\r\n').join('\n') : text);
      }
      const input: ScanInput = {
        texts,
        source: regex.source,
        flags: regex.flags,
        // Without lookarounds, a line matches only if the whole (LF) text does: test each file once first.
        prefilter: !/\(\?<?[=!]/.test(pattern),
        max: MAX_SEARCH_MATCHES,
      };
      let result: ScanOutput;
      try {
        result = SCAN.runInContext(vm.createContext({ input }), { timeout: timeoutMs }) as ScanOutput;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error;
        throw new ToolError(
          `The search was stopped after ${timeoutMs / 1000} s: the pattern probably backtracks catastrophically (nested quantifiers such as (a+)+ or (.*)*). Simplify the pattern, or narrow the search with path or glob.`,
        );
      }
      const { hits, total, filesMatched } = result;
      const shown = hits.map(([index, line, text]) => `${files[index]}:${line}: ${cut(text)}`);
      const notes: string[] = [];
      if (tooLarge > 0) notes.push(`(${plural(tooLarge, 'file')} over ${formatBytes(max)} not searched.)`);
      if (walked.truncated) notes.push('(The file walk stopped early; narrow with path/glob.)');
      if (total === 0) {
        const where = base === '.' ? '' : ` under "${base}"`;
        const filter = glob ? ` in files matching "${glob}"` : '';
        return [`No matches for /${pattern}/${ignore_case ? 'i' : ''}${where}${filter}.`, ...notes].join(
          '\n',
        );
      }
      if (total > shown.length) {
        shown.push(
          `… ${total - shown.length} more matches (${total} in ${plural(filesMatched, 'file')}); narrow with path, glob or a more specific pattern.`,
        );
      }
      return [...shown, ...notes].join('\n');
    },
  };
}

export const search = createSearchTool();

interface ScanInput {
  texts: string[];
  source: string;
  flags: string;
  prefilter: boolean;
  max: number;
}

interface ScanOutput {
  /** [index in texts, 1-based line, line text], the first `max`. */
  hits: [number, number, string][];
  total: number;
  filesMatched: number;
}

/**
 * The matching loop. It runs in a V8 context with a timeout (vm), so a
 * pattern that backtracks catastrophically is stopped instead of blocking the
 * process; it therefore uses nothing from this module's scope.
 */
function scan(input: ScanInput): ScanOutput {
  const regex = new RegExp(input.source, input.flags);
  const hits: [number, number, string][] = [];
  let total = 0;
  let filesMatched = 0;
  for (let f = 0; f < input.texts.length; f++) {
    const text = input.texts[f] as string;
    if (input.prefilter && !regex.test(text)) continue;
    const lines = text.split('\n');
    let matched = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (!regex.test(line)) continue;
      matched = true;
      total++;
      if (hits.length < input.max) hits.push([f, i + 1, line]);
    }
    if (matched) filesMatched++;
  }
  return { hits, total, filesMatched };
}

const SCAN = new vm.Script(`(${scan.toString()})(input)`, { filename: 'docwright-search-scan.js' });

function compile(pattern: string, ignoreCase: boolean): RegExp {
  const flags = ignoreCase ? 'im' : 'm';
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      const hint = /^\(\?[a-z]+\)/.test(pattern)
        ? ' JavaScript has no inline flags such as (?i): set ignore_case to true instead.'
        : ' The pattern is a JavaScript regular expression.';
      throw new ToolError(`${(error as Error).message}.${hint}`);
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
