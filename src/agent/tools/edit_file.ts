import { z } from 'zod';
import { ToolError } from '../types.ts';
import { decodeText, lineAt, linesAt, numbered, plural, splitLines } from './shared.ts';
import type { AgentTool } from './tool.ts';

const parameters = z.object({
  path: z.string().describe('File to edit, relative to the repository root. Read it with read_file first.'),
  old_string: z
    .string()
    .describe(
      'The exact text to replace, copied from the file without the line-number prefix of read_file, including indentation. It must occur exactly once unless replace_all is true: include enough surrounding lines to make it unique.',
    ),
  new_string: z
    .string()
    .describe('The text to put in its place (must differ from old_string). Empty deletes it.'),
  replace_all: z
    .boolean()
    .optional()
    .describe('Replace every occurrence of old_string instead of exactly one. Default: false.'),
});

export const editFile: AgentTool<z.infer<typeof parameters>> = {
  name: 'edit_file',
  description:
    'Replace an exact piece of text in a file that was read in this run. old_string must match the file exactly (differences in line endings and trailing spaces are tolerated, nothing else); if it occurs more than once, the error lists the line of every occurrence: add surrounding lines to make it unique, or set replace_all. To create a file or replace all of it, use write_file.',
  parameters,
  async execute({ path, old_string, new_string, replace_all = false }, { workspace }) {
    if (old_string === '') {
      throw new ToolError(
        'old_string is empty; to create a file or replace all of its content, use write_file.',
      );
    }
    if (old_string === new_string) {
      throw new ToolError('old_string and new_string are identical; there is nothing to change.');
    }
    const { relative } = workspace.locate(path, { write: true });
    let file: ReturnType<typeof workspace.readFile>;
    try {
      file = workspace.readFile(relative);
    } catch (error) {
      if (error instanceof ToolError && error.message.startsWith('File not found')) {
        throw new ToolError(`${error.message}\nTo create a new file, use write_file.`);
      }
      throw error;
    }
    workspace.assertReadAndUnchanged(relative);
    const content = decodeText(relative, file.bytes);

    const found = findMatches(content, old_string, new_string);
    if (found === null) throw new ToolError(notFoundMessage(relative, content, old_string));
    const { matches, replacement, note } = found;
    if (matches.length > 1 && !replace_all) {
      const lines = linesAt(
        content,
        matches.slice(0, 51).map((m) => m.start),
      );
      throw new ToolError(
        `old_string occurs ${matches.length} times in ${relative}, at lines ${listNumbers(lines, matches.length)}. Include more surrounding lines to make it unique, or set replace_all to true to replace every occurrence.`,
      );
    }
    // The size is known before the new content is built: a replace_all that would grow the file
    // past its cap is refused without ever holding the oversized text.
    let replacedBytes = 0;
    for (const m of matches) replacedBytes += Buffer.byteLength(content.slice(m.start, m.end));
    const charge = Buffer.byteLength(replacement) * matches.length;
    workspace.locate(relative, { write: true, bytes: file.bytes.length - replacedBytes + charge, charge });
    const parts: string[] = [];
    let previous = 0;
    for (const m of matches) {
      parts.push(content.slice(previous, m.start), replacement);
      previous = m.end;
    }
    parts.push(content.slice(previous));
    const updated = parts.join('');
    workspace.writeFile(relative, updated, charge);

    const firstLine = lineAt(updated, matches[0]!.start);
    const summary = `Edited ${relative}: replaced ${plural(matches.length, 'occurrence')}${note ? ` (${note})` : ''}.`;
    return `${summary}\n${snippet(updated, firstLine, replacement)}`;
  },
};

interface Match {
  start: number;
  end: number;
}

interface Found {
  matches: Match[];
  /** new_string, with the file's line endings where a fallback needed them. */
  replacement: string;
  note?: string;
}

/**
 * Exact first; then the only fallbacks: line endings (LF vs CRLF), then
 * trailing whitespace at line ends. Never a similarity guess.
 */
export function findMatches(content: string, oldString: string, newString: string): Found | null {
  const found = findRaw(content, oldString, newString);
  if (found === null) return null;
  // A match that starts at the LF of a CRLF, replaced by text that starts with CRLF, takes the CR too.
  if (found.replacement.startsWith('\r\n')) {
    let previousEnd = 0;
    for (const m of found.matches) {
      if (m.start > previousEnd && content[m.start] === '\n' && content[m.start - 1] === '\r') m.start--;
      previousEnd = m.end;
    }
  }
  return found;
}

function findRaw(content: string, oldString: string, newString: string): Found | null {
  const endings = lineEndings(content);
  // new_string takes the file's line endings when the file is consistent.
  const adapt = (text: string): string =>
    endings === 'crlf' ? toCrlf(toLf(text)) : endings === 'lf' ? toLf(text) : text;

  const exact = occurrences(content, oldString);
  if (exact.length > 0) return { matches: exact, replacement: adapt(newString) };

  const oldLf = toLf(oldString);
  if (endings !== 'lf' && oldLf.includes('\n')) {
    const crlf = occurrences(content, toCrlf(oldLf));
    if (crlf.length > 0) {
      return { matches: crlf, replacement: toCrlf(toLf(newString)), note: 'matched with CRLF line endings' };
    }
  }
  if (endings !== 'crlf' && oldString.includes('\r\n')) {
    const lf = occurrences(content, oldLf);
    if (lf.length > 0)
      return { matches: lf, replacement: toLf(newString), note: 'matched with LF line endings' };
  }

  const wanted = normalise(oldString).text;
  if (wanted.trim() === '') return null;
  const norm = normalise(content);
  const found = occurrences(norm.text, wanted);
  if (found.length === 0) return null;
  let previousEnd = 0;
  const matches = found.map(({ start, end }) => {
    let originalStart = norm.map[start]!;
    // A match that starts with a line break takes the blanks that end the line before.
    if (content[originalStart] === '\n') {
      while (originalStart > previousEnd && ' \t\r'.includes(content[originalStart - 1]!)) originalStart--;
    }
    let originalEnd = norm.map[end - 1]! + 1;
    // Blanks after the match's last character belong to it when they end the line.
    let k = originalEnd;
    while (k < content.length && (content[k] === ' ' || content[k] === '\t')) k++;
    if (k === content.length || content[k] === '\n' || (content[k] === '\r' && content[k + 1] === '\n')) {
      originalEnd = k;
    }
    previousEnd = originalEnd;
    return { start: originalStart, end: originalEnd };
  });
  const region = content.slice(matches[0]!.start, matches[0]!.end);
  const replacement = region.includes('\n')
    ? region.includes('\r\n')
      ? toCrlf(toLf(newString))
      : toLf(newString)
    : adapt(newString);
  return { matches, replacement, note: 'matched ignoring trailing whitespace' };
}

/** 'crlf' when every line ends with CRLF, 'lf' when none does, else 'mixed'. */
function lineEndings(content: string): 'lf' | 'crlf' | 'mixed' {
  const crlf = content.split('\r\n').length - 1;
  if (crlf === 0) return 'lf';
  const lf = content.split('\n').length - 1;
  return crlf === lf ? 'crlf' : 'mixed';
}

/** Start and end of every non-overlapping occurrence, left to right. */
function occurrences(haystack: string, needle: string): Match[] {
  const out: Match[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) {
    out.push({ start: i, end: i + needle.length });
  }
  return out;
}

const toLf = (s: string): string => s.split('\r\n').join('\n');
const toCrlf = (lf: string): string => lf.split('\n').join('\r\n');

/**
 * The text with blanks (and CR) at the end of every line removed, with, for
 * each character of the result, its index in the original.
 */
function normalise(text: string): { text: string; map: number[] } {
  const parts: string[] = [];
  const map: number[] = [];
  let start = 0;
  for (;;) {
    const newline = text.indexOf('\n', start);
    const lineEnd = newline === -1 ? text.length : newline;
    let end = lineEnd;
    while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t' || text[end - 1] === '\r')) end--;
    parts.push(text.slice(start, end));
    for (let i = start; i < end; i++) map.push(i);
    if (newline === -1) break;
    parts.push('\n');
    map.push(newline);
    start = newline + 1;
  }
  return { text: parts.join(''), map };
}

function notFoundMessage(relative: string, content: string, oldString: string): string {
  const lines = splitLines(content);
  const prefixed = /^ *\d+\t/m.test(oldString);
  const first = oldString.split('\n').find((l) => l.trim() !== '') ?? oldString;
  const target = (prefixed && /^ *\d+\t/.test(first) ? first.slice(first.indexOf('\t') + 1) : first).trim();
  const scored = lines
    .map((line, i) => ({ number: i + 1, line, score: similarity(target, line.trim()) }))
    .filter((s) => s.score > 0.3)
    .sort((a, b) => b.score - a.score || a.number - b.number)
    .slice(0, 3)
    .sort((a, b) => a.number - b.number);
  const parts = [`old_string was not found in ${relative}.`];
  if (prefixed) {
    parts.push(
      'It seems to include the line-number prefixes of read_file: copy only the text after the tab.',
    );
  }
  if (scored.length > 0) {
    parts.push(
      `The lines closest to its first line (${JSON.stringify(cutForMessage(target))}) are:`,
      ...scored.map((s) => numbered(s.number, cutForMessage(s.line))),
    );
  } else {
    parts.push(`No line of the file resembles its first line (${JSON.stringify(cutForMessage(target))}).`);
  }
  parts.push('Read the file again and copy the text exactly, including indentation.');
  return parts.join('\n');
}

const cutForMessage = (s: string): string => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

/** Dice coefficient over character bigrams: how many characters two lines share, in order. */
export function similarity(a: string, b: string): number {
  if (a === b) return a === '' ? 0 : 1;
  if (a.length < 2 || b.length < 2) return 0;
  const counts = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const gram = a.slice(i, i + 2);
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const gram = b.slice(i, i + 2);
    const n = counts.get(gram);
    if (n) {
      shared++;
      counts.set(gram, n - 1);
    }
  }
  return (2 * shared) / (a.length - 1 + b.length - 1);
}

function listNumbers(numbers: number[], total: number): string {
  const shown = numbers.slice(0, 50).join(', ');
  return total > 50 ? `${shown} and ${total - 50} more` : shown;
}

/** The edited region with two lines of context, numbered like read_file. */
function snippet(content: string, firstLine: number, replacement: string): string {
  const lines = splitLines(content);
  const replacedLines = toLf(replacement).split('\n').length;
  const from = Math.max(1, firstLine - 2);
  const to = Math.min(lines.length, firstLine + replacedLines - 1 + 2, from + 20);
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(numbered(n, lines[n - 1]!));
  return out.join('\n');
}
