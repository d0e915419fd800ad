/**
 * Paths as the model gives them: relative POSIX paths inside the repository, checked for syntax
 * before anything touches the disk (src/agent/workspace.ts then walks them for links).
 */
import { ToolError } from './types.ts';

/** Path segments the agent may never touch, compared case-insensitively. */
export const FORBIDDEN_SEGMENTS = new Set(['.git', '.github']);
/** Longest path segment (most file systems' limit) and whole path, in UTF-8 bytes. */
const MAX_SEGMENT_BYTES = 255;
const MAX_PATH_BYTES = 4_096;

/** Checks the syntax of a model-supplied path and returns it normalised ('.' for the root). */
export function normaliseInput(input: string): string {
  if (typeof input !== 'string') throw new ToolError('Path must be a string.');
  if (input.includes('\0')) throw new ToolError('Path contains a NUL character.');
  if (input.includes('\\')) {
    throw new ToolError(`Path "${input}" contains a backslash; use forward slashes ("docs/page.mdx").`);
  }
  if (input.startsWith('/') || /^[A-Za-z]:/.test(input) || input.startsWith('~')) {
    throw new ToolError(
      `Path "${input}" is absolute; use a path relative to the repository root, such as "docs/index.mdx".`,
    );
  }
  const segments = input.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    throw new ToolError(`Path "${input}" contains "..": paths must stay inside the repository.`);
  }
  if (Buffer.byteLength(input) > MAX_PATH_BYTES) {
    throw new ToolError(
      `Path is ${Buffer.byteLength(input)} bytes long; paths may be at most ${MAX_PATH_BYTES} bytes.`,
    );
  }
  const long = segments.find((s) => Buffer.byteLength(s) > MAX_SEGMENT_BYTES);
  if (long !== undefined) {
    throw new ToolError(
      `Path "${input.slice(0, 80)}…" has a name of ${Buffer.byteLength(long)} bytes; file and folder names may be at most ${MAX_SEGMENT_BYTES} bytes.`,
    );
  }
  return segments.length === 0 ? '.' : segments.join('/');
}

/** Code-unit order: the order git and the tools list paths in, whatever the locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
