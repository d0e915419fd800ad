import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { RE2JS } from 're2js';
import { z } from 'zod';
import { CONTEXT_DIR, type CodeSearchQuery, codeError, codeTarget, contextNames } from '../code.ts';
import { checkDeadline } from '../deadline.ts';
import { formatBytes } from '../format.ts';
import { compareStrings } from '../paths.ts';
import { ToolError } from '../types.ts';
import type { Workspace } from '../workspace.ts';
import { globFilter, isBinary, plural, splitLines } from './shared.ts';
import type { AgentTool } from './tool.ts';

/** Most matching lines search shows. */
export const MAX_SEARCH_MATCHES = 200;
/** Longest line search shows before cutting it. */
const MAX_MATCH_LINE_CHARS = 500;

const parameters = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Regular expression (RE2 syntax) matched against each line, e.g. "api[_-]key" or "^## ". Escape special characters (\\\\. \\\\( \\\\[) to match them literally.',
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

type Parameters = z.infer<typeof parameters>;

/** Longest pattern accepted (RE2 programs grow with it). */
const MAX_PATTERN_CHARS = 1_000;
/** Most bytes one search reads; past it the search stops and says so. */
export const MAX_SEARCH_BYTES = 64 * 1024 * 1024;

export const search: AgentTool<Parameters> = {
  name: 'search',
  description: `Search file contents with a regular expression (RE2 syntax: like JavaScript's, without lookarounds or backreferences; (?i) works), line by line. Returns matching lines as "path:line: text", sorted by path then line, at most ${MAX_SEARCH_MATCHES}, with a count of the rest. Skips binary files, .git, node_modules and files ignored by .gitignore. Use it to find every page that mentions something before editing, and the code that defines what you document (context repositories are under ${CONTEXT_DIR}/<name>/).`,
  parameters,
  async execute({ pattern, path: dir = '.', glob, ignore_case = false }, { workspace, deadline }) {
    const regex = compilePattern(pattern, ignore_case);
    const code = workspace.code;
    const target = codeTarget(dir, workspace.docsDir, code);
    const found: Found[] = [];
    const notes: string[] = [];
    const end = deadline ?? Date.now() + workspace.limits.maxToolMs;
    const query = (path: string, exclude?: string) => ({
      pattern,
      ignoreCase: ignore_case,
      path,
      ...(glob === undefined ? {} : { glob }),
      ...(exclude === undefined ? {} : { exclude }),
      deadline: end,
    });
    if (glob) globFilter(glob, target.relative); // a bad glob is the model's to fix, before any request
    if (target.where === 'workspace' || target.where === 'both') {
      const base = target.where === 'both' ? workspace.docsDir : workspace.locate(dir).relative;
      let files: string[] = [];
      let truncated = false;
      try {
        ({ files, truncated } = workspace.walk(base, { deadline }));
      } catch (error) {
        if (!(error instanceof ToolError) || target.where === 'workspace') throw error;
      }
      const wanted = glob ? globFilter(glob, target.relative) : null;
      found.push(searchWorkspace(workspace, regex, wanted ? files.filter(wanted) : files, deadline, notes));
      if (truncated) notes.push('(The file walk stopped early; narrow with path/glob.)');
    }
    if (target.where === 'code') {
      found.push(await searchCode(workspace, target.repository, target.shown, query(target.path)));
    } else if (target.where === 'both') {
      found.push(await searchCode(workspace, 'docs', '', query(target.relative, workspace.docsDir)));
    } else if (target.where === 'context-root') {
      for (const name of contextNames(code)) {
        found.push(await searchCode(workspace, name, `${CONTEXT_DIR}/${name}/`, query('.')));
      }
    }
    if (
      target.where !== 'code' &&
      target.where !== 'context-root' &&
      contextNames(code).length > 0 &&
      target.relative === '.'
    ) {
      notes.push(
        `(Context repositories are searched with path "${CONTEXT_DIR}" or "${CONTEXT_DIR}/<name>".)`,
      );
    }
    const total = found.reduce((sum, f) => sum + f.total, 0);
    const filesMatched = found.reduce((sum, f) => sum + f.filesMatched, 0);
    notes.unshift(...found.flatMap((f) => f.notes));
    if (total === 0) {
      const where = target.relative === '.' ? '' : ` under "${target.relative}"`;
      const filter = glob ? ` in files matching "${glob}"` : '';
      return [`No matches for /${pattern}/${ignore_case ? 'i' : ''}${where}${filter}.`, ...notes].join('\n');
    }
    const shown = found
      .flatMap((f) => f.lines)
      .map((line) => ({ line, key: matchKey(line) }))
      .sort((a, b) => compareStrings(a.key.path, b.key.path) || a.key.line - b.key.line)
      .slice(0, MAX_SEARCH_MATCHES)
      .map((entry) => entry.line);
    if (total > shown.length) {
      shown.push(
        `… ${total - shown.length} more matches (${total} in ${plural(filesMatched, 'file')}); narrow with path, glob or a more specific pattern.`,
      );
    }
    return [...shown, ...notes].join('\n');
  },
};

/** Matching lines of one place searched. */
export interface Found {
  lines: string[];
  total: number;
  filesMatched: number;
  notes: string[];
}

/** `path` and line number of a `path:line: text` result. */
function matchKey(text: string): { path: string; line: number } {
  const match = /^(.*?):(\d+): /.exec(text);
  return match ? { path: match[1]!, line: Number(match[2]) } : { path: text, line: 0 };
}

/** Adds the matching lines of one file's bytes to `found` (binary files are skipped). */
export function matchFile(regex: RE2JS, file: string, bytes: Buffer, found: Found): void {
  if (isBinary(bytes)) return;
  const raw = bytes.toString('utf8');
  const text = raw.includes('\r') ? raw.split('\r\n').join('\n') : raw;
  // One pass of the automaton over the whole file first: most files do not match at all.
  if (!regex.test(text)) return;
  const lines = splitLines(text);
  let matched = false;
  for (let i = 0; i < lines.length; i++) {
    if (!regex.test(lines[i]!)) continue;
    matched = true;
    found.total++;
    if (found.lines.length < MAX_SEARCH_MATCHES) found.lines.push(`${file}:${i + 1}: ${cut(lines[i]!)}`);
  }
  if (matched) found.filesMatched++;
}

/** Searches files of the checkout. */
function searchWorkspace(
  workspace: Workspace,
  regex: RE2JS,
  files: string[],
  deadline: number | undefined,
  notes: string[],
): Found {
  const max = workspace.limits.maxFileBytes;
  const found: Found = { lines: [], total: 0, filesMatched: 0, notes: [] };
  let tooLarge = 0;
  let budget = MAX_SEARCH_BYTES;
  let stoppedAt: string | undefined;
  for (const file of files) {
    checkDeadline(deadline);
    if (budget <= 0) {
      stoppedAt = file;
      break;
    }
    const bytes = readUpTo(path.join(workspace.root, file), max);
    if (bytes === null) continue;
    if (bytes === 'too-large') {
      tooLarge++;
      continue;
    }
    budget -= bytes.length;
    matchFile(regex, file, bytes, found);
  }
  if (tooLarge > 0) notes.push(`(${plural(tooLarge, 'file')} over ${formatBytes(max)} not searched.)`);
  if (stoppedAt !== undefined) {
    notes.push(
      `(The search stopped at ${stoppedAt} after reading ${formatBytes(MAX_SEARCH_BYTES)}; narrow it with path or glob.)`,
    );
  }
  return found;
}

/** Searches one repository's code through the code reader; its paths shown under `shown`. */
async function searchCode(
  workspace: Workspace,
  repository: string,
  shown: string,
  query: CodeSearchQuery,
): Promise<Found> {
  try {
    const result = await workspace.code!.reader.search(repository, query);
    return {
      lines: result.lines.map((line) => `${shown}${line}`),
      total: result.total,
      filesMatched: result.filesMatched,
      notes: result.notes.map((note) => note.replaceAll('{shown}', shown)),
    };
  } catch (error) {
    throw codeError(`search "${shown}${query.path === '.' ? '' : query.path}"`, error);
  }
}

/**
 * Compiles the model's pattern for re2js, whose matching takes time linear in the text (no
 * pattern can backtrack catastrophically). JavaScript's \uXXXX and \u{…} escapes become RE2's
 * \x{…}; what RE2 cannot do (lookarounds, backreferences) is refused with a way forward.
 */
export function compilePattern(pattern: string, ignoreCase: boolean): RE2JS {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new ToolError(
      `The pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted.`,
    );
  }
  const source = pattern.replace(
    /(?<!\\)((?:\\\\)*)\\u(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{4}))/g,
    '$1\\x{$2$3}',
  );
  const flags = RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  try {
    return RE2JS.compile(source, flags);
  } catch (error) {
    // re2js reports the expression with the flags it added, e.g. `(?m)(unclosed`.
    const reason = (error as Error).message.replace(/^error parsing regexp: /, '').replace(/`\(\?i?m\)/, '`');
    const hint = /\(\?<?[=!]/.test(pattern)
      ? ' Lookarounds are not supported: search for the text itself, or run two searches.'
      : /\\[1-9]/.test(pattern)
        ? ' Backreferences are not supported.'
        : '';
    throw new ToolError(
      `Invalid regular expression /${pattern}/: ${reason}.${hint} The pattern uses RE2 syntax.`,
    );
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
