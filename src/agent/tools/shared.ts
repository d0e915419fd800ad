/** Helpers shared by the agent's tools: text decoding, line handling, globs, bounds. */
import { isUtf8 } from 'node:buffer';
import path from 'node:path';
import { compileGlob, GlobSyntaxError } from '../../glob.ts';
import { ToolError } from '../types.ts';

/** Longest line read_file shows before cutting it. */
export const MAX_LINE_CHARS = 2000;
/** Largest tool output, in bytes (read_file stops adding lines past it). */
export const MAX_OUTPUT_BYTES = 50 * 1024;
/** How many bytes are looked at to tell a binary file. */
export const BINARY_SNIFF_BYTES = 8192;

/** A file with a NUL byte in its first 8 KiB is binary. */
export function isBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** The file's text, or a ToolError for a binary or non-UTF-8 file. */
export function decodeText(relative: string, bytes: Buffer): string {
  if (isBinary(bytes)) {
    throw new ToolError(
      `"${relative}" is a binary file (${bytes.length} bytes); only text files can be read or edited.`,
    );
  }
  if (!isUtf8(bytes)) throw new ToolError(`"${relative}" is not UTF-8 text; it cannot be read or edited.`);
  return bytes.toString('utf8');
}

/** Lines without their terminators ('\n' or '\r\n'); a final newline does not start a line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1);
  }
  return lines;
}

/** `     1\tline` — the numbering read_file uses. */
export function numbered(lineNumber: number, line: string): string {
  return `${String(lineNumber).padStart(6)}\t${line}`;
}

/** Cuts a line longer than `max` characters, saying how much was left out. */
export function cutLine(line: string, max = MAX_LINE_CHARS): string {
  return line.length > max ? `${line.slice(0, max)}… [line cut: ${line.length - max} more characters]` : line;
}

/** 1-based line number of the character at `index`. */
export function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/**
 * A predicate over repository-relative paths for a model-supplied glob. The
 * glob is matched against the path relative to `base`; a glob without a `/`
 * (such as `*.mdx`) matches file names at any depth.
 */
export function globFilter(glob: string, base: string): (relative: string) => boolean {
  let match: (p: string) => boolean;
  try {
    match = compileGlob(glob, { dot: true });
  } catch (error) {
    if (error instanceof GlobSyntaxError) throw new ToolError(`${upperFirst(error.message)}.`);
    throw error;
  }
  const prefix = base === '.' ? '' : `${base}/`;
  const byName = !glob.includes('/');
  return (relative) => {
    const local = relative.startsWith(prefix) ? relative.slice(prefix.length) : relative;
    return match(byName ? path.posix.basename(local) : local);
  };
}

const upperFirst = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

export const plural = (n: number, word: string, words = `${word}s`): string =>
  `${n} ${n === 1 ? word : words}`;
