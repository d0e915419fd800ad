/**
 * The agent's `CodeReader` (src/agent/code.ts) served from git (src/git/code-reader.ts): one
 * reader per repository — `docs` (the run's checkout at its base commit: the code outside
 * `docsDir`, read from the mirror's objects while the checkout stays sparse) and each context
 * repository (its mirror at the change's head or its ref) — with the agent's own glob and RE2
 * matching, every answer bounded whatever the request asks.
 */
import {
  type CodeChangedPaths,
  type CodeFile,
  type CodeListing,
  type CodePathDiff,
  type CodeReader,
  type CodeSearchQuery,
  type CodeSearchResult,
  DOCS_REPOSITORY,
} from '../agent/code.ts';
import { formatBytes } from '../agent/format.ts';
import { compareStrings, normaliseInput } from '../agent/paths.ts';
import { MAX_LIST_ENTRIES } from '../agent/tools/list_files.ts';
import { compilePattern, type Found, MAX_SEARCH_BYTES, matchFile } from '../agent/tools/search.ts';
import { globFilter, plural } from '../agent/tools/shared.ts';
import { ToolError } from '../agent/types.ts';
import type { CodeSource } from '../git/code-reader.ts';

/** Files one search looks at, at most. */
export const MAX_SEARCH_FILES = 50_000;

export interface GitCodeContextOptions {
  /** Readers by repository name (`docs` for the project's own). */
  readers: Map<string, CodeSource>;
  /** Largest file read or searched (the agent's `limits.maxFileBytes`). */
  maxFileBytes: number;
  /** Bytes one search reads at most (default: the workspace search's 64 MiB). */
  maxSearchBytes?: number;
  /** Files one search looks at, at most (default 50,000). */
  maxSearchFiles?: number;
}

/** Paths of a change listed from git at most, and characters of one file's diff sent. */
export const MAX_CHANGED_PATHS = 10_000;
export const MAX_PATH_DIFF_CHARS = 100_000;

/** A commit id as the change resolution gave it (a full id), or a tool error. */
function commitOf(value: string): string {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(value))
    throw new ToolError(`"${value}" is not a commit id of the change.`);
  return value;
}

const within = (path: string, dir: string) => dir === '.' || path === dir || path.startsWith(`${dir}/`);

/** A CodeReader answering from git; close the git readers when the run is over. */
export function gitCodeContext(options: GitCodeContextOptions): CodeReader {
  const readerOf = (repository: string): CodeSource => {
    const reader = options.readers.get(repository);
    if (!reader) throw new ToolError(`There is no repository named "${repository}" to read.`);
    return reader;
  };
  /** Keeps paths the request wants: under `path`, matching `glob`, outside `exclude`. */
  const filterOf = (path: string, glob: string | undefined, exclude: string | undefined) => {
    const wanted = glob ? globFilter(glob, path) : null;
    const excluded = exclude === undefined ? null : normaliseInput(exclude);
    return (file: string) =>
      (excluded === null || !within(file, excluded)) && (wanted === null || wanted(file));
  };
  return {
    async list(repository, path, { glob, exclude, max }): Promise<CodeListing> {
      const dir = normaliseInput(path);
      const listed = await readerOf(repository).list(dir, {
        max: Math.min(Math.max(0, max), MAX_LIST_ENTRIES),
        filter: filterOf(dir, glob, exclude),
      });
      return { files: listed.files.sort(compareStrings), total: listed.total, exists: listed.exists };
    },

    async changedPaths(repository, base, head, max): Promise<CodeChangedPaths> {
      return readerOf(repository).changedPaths(
        commitOf(base),
        commitOf(head),
        Math.min(Math.max(0, max), MAX_CHANGED_PATHS),
      );
    },

    async pathDiff(repository, base, head, path, maxChars): Promise<CodePathDiff | null> {
      return readerOf(repository).pathDiff(
        commitOf(base),
        commitOf(head),
        normaliseInput(path),
        Math.min(Math.max(0, maxChars), MAX_PATH_DIFF_CHARS),
      );
    },

    async read(repository, path): Promise<CodeFile> {
      const outcome = await readerOf(repository).read(normaliseInput(path), options.maxFileBytes);
      return outcome.kind === 'file' ? { kind: 'file', bytes: new Uint8Array(outcome.bytes) } : outcome;
    },

    async search(repository, query: CodeSearchQuery): Promise<CodeSearchResult> {
      const regex = compilePattern(query.pattern, query.ignoreCase);
      const dir = normaliseInput(query.path);
      const maxBytes = options.maxSearchBytes ?? MAX_SEARCH_BYTES;
      const found: Found = { lines: [], total: 0, filesMatched: 0, notes: [] };
      const scan = await readerOf(repository).scan(
        dir,
        {
          filter: filterOf(dir, query.glob, query.exclude),
          maxFiles: options.maxSearchFiles ?? MAX_SEARCH_FILES,
          maxBytes,
          maxFileBytes: options.maxFileBytes,
          deadline: query.deadline,
        },
        (file, bytes) => {
          matchFile(regex, file, bytes, found);
          return undefined;
        },
      );
      const notes: string[] = [];
      if (scan.skippedTooLarge > 0) {
        notes.push(
          `(${plural(scan.skippedTooLarge, 'file')} over ${formatBytes(options.maxFileBytes)} not searched.)`,
        );
      }
      if (scan.stopped) {
        const at = `{shown}${scan.stopped.at}`;
        const why = {
          files: `after ${plural(options.maxSearchFiles ?? MAX_SEARCH_FILES, 'file')}`,
          bytes: `after reading ${formatBytes(maxBytes)}`,
          deadline: 'when the time for one tool call ran out',
          caller: '',
        }[scan.stopped.reason];
        notes.push(`(The search of the code stopped at ${at} ${why}; narrow it with path or glob.)`);
      }
      return {
        lines: found.lines,
        total: found.total,
        filesMatched: found.filesMatched,
        tooLarge: scan.skippedTooLarge,
        notes,
      };
    },
  };
}

/** The repository names a run's reader serves, `docs` first. */
export const servedRepositories = (readers: Map<string, unknown>): string[] =>
  [...readers.keys()].sort((a, b) =>
    a === DOCS_REPOSITORY ? -1 : b === DOCS_REPOSITORY ? 1 : compareStrings(a, b),
  );
