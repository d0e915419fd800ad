/**
 * The code the agent reads but never writes (docs/code-context.mdx): each context repository under
 * `_context/<name>/`, and the project's own repository outside `docsDir` at its real paths.
 *
 * The agent knows nothing of git: a `CodeReader` answers list/read/search by repository name
 * (`docs` for the project's own), and the worker serves it from the mirror cache — in the
 * agent's process through IPC (src/pipeline/code-ipc.ts). This module says which repository a
 * path the model gives belongs to.
 */
import { CONTEXT_DIR, DOCS_REPOSITORY } from '../repository-names.ts';
import { compareStrings, FORBIDDEN_SEGMENTS, normaliseInput } from './paths.ts';
import { ToolError } from './types.ts';

export type {
  CodeChangedPaths,
  CodeDescription,
  CodeFile,
  CodeListing,
  CodePathDiff,
  CodeReader,
  CodeSearchQuery,
  CodeSearchResult,
} from './code-types.ts';
export { CONTEXT_DIR, DOCS_REPOSITORY };

import type { CodeReader } from './code-types.ts';

/** What the tools get: the reader and the repositories it serves. */
export interface CodeAccess {
  reader: CodeReader;
  repositories: string[];
}

/** Where a path the model gives leads. */
export type CodeTarget =
  /** The checkout: the documentation (or the whole repository when no code is readable). */
  | { where: 'workspace'; relative: string }
  /** One repository's code, read-only; `shown` is how its paths are shown (`_context/api/` or ''). */
  | { where: 'code'; repository: string; path: string; shown: string; relative: string }
  /** An ancestor of `docsDir` (the root, say): the documentation from the checkout, the rest from the code. */
  | { where: 'both'; relative: string }
  /** `_context` itself: the context repositories. */
  | { where: 'context-root'; relative: string };

export const contextNames = (code: CodeAccess | undefined): string[] =>
  (code?.repositories ?? []).filter((name) => name !== DOCS_REPOSITORY);

const within = (relative: string, dir: string) =>
  dir === '.' || relative === dir || relative.startsWith(`${dir}/`);

/** The repository and path `input` names (syntax checked as for the workspace). */
export function codeTarget(input: string, docsDir: string, code: CodeAccess | undefined): CodeTarget {
  const relative = normaliseInput(input);
  if (!code) return { where: 'workspace', relative };
  const segments = relative === '.' ? [] : relative.split('/');
  const forbidden = segments.find((s) => FORBIDDEN_SEGMENTS.has(s.toLowerCase()));
  if (forbidden !== undefined) {
    throw new ToolError(`Path "${input}" is inside ${forbidden}/, which the agent may not access.`);
  }
  const contexts = contextNames(code);
  if (segments[0] === CONTEXT_DIR && contexts.length > 0) {
    if (segments.length === 1) return { where: 'context-root', relative };
    const name = segments[1]!;
    if (!contexts.includes(name)) {
      throw new ToolError(
        `There is no context repository named "${name}". The context repositories are: ${contexts.map((c) => `${CONTEXT_DIR}/${c}/`).join(', ')}.`,
      );
    }
    return {
      where: 'code',
      repository: name,
      path: segments.slice(2).join('/') || '.',
      shown: `${CONTEXT_DIR}/${name}/`,
      relative,
    };
  }
  if (!code.repositories.includes(DOCS_REPOSITORY) || docsDir === '.')
    return { where: 'workspace', relative };
  if (within(relative, docsDir)) return { where: 'workspace', relative };
  if (within(docsDir, relative)) return { where: 'both', relative };
  return { where: 'code', repository: DOCS_REPOSITORY, path: relative, shown: '', relative };
}

/** Whether a write to `relative` would land in read-only code: the message saying so, or null. */
export function readOnlyCodeRefusal(
  input: string,
  relative: string,
  docsDir: string,
  code: CodeAccess | undefined,
): string | null {
  if (contextNames(code).length === 0) return null;
  if (relative !== CONTEXT_DIR && !relative.startsWith(`${CONTEXT_DIR}/`)) return null;
  const where = docsDir === '.' ? 'in the documentation repository' : `inside "${docsDir}/"`;
  return `Cannot write "${input}": ${CONTEXT_DIR}/ holds the code of context repositories, which is read-only. Documentation may be written only ${where}.`;
}

/** Shows a repository-relative path of `repository` as the model addresses it. */
export const shownPath = (shown: string, path: string): string => `${shown}${path}`;

/** Merges two sorted lists of paths into one, without duplicates. */
export function mergePaths(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort(compareStrings);
}

/** A reader failure as a tool error (the IPC or git layer already kept secrets out of it). */
export function codeError(what: string, error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ToolError(`Could not ${what}: ${message.slice(0, 300)}. Try again, or another path.`);
}
