/**
 * The types of the code a run reads and the changes it documents (docs/code-context.mdx), on their own so
 * that the agent's contract (types.ts) can name them without importing any code.
 */

/** Which code a run may read (serializable: it crosses to the agent's process). */
export interface CodeDescription {
  /** Repository names: `docs` when the project's own code outside `docsDir` is readable, then context repositories. */
  repositories: string[];
}

export interface CodeListing {
  /** Repository-relative paths, sorted, at most the `max` asked for. */
  files: string[];
  /** How many files matched in all. */
  total: number;
  /** Whether the path exists in the repository. */
  exists: boolean;
}

export type CodeFile =
  | { kind: 'file'; bytes: Uint8Array }
  | { kind: 'directory' }
  | { kind: 'missing' }
  | { kind: 'too-large'; size: number };

export interface CodeSearchQuery {
  pattern: string;
  ignoreCase: boolean;
  /** Repository-relative folder or file ('.' for all). */
  path: string;
  /** As the search tool takes it: relative to `path`; without `/` it matches file names. */
  glob?: string;
  /** A folder left out (the docs repository's `docsDir`, which the workspace answers for). */
  exclude?: string;
  /** When to stop (epoch ms). */
  deadline: number;
}

export interface CodeSearchResult {
  /** `path:line: text` with repository-relative paths, at most MAX_SEARCH_MATCHES. */
  lines: string[];
  total: number;
  filesMatched: number;
  tooLarge: number;
  /** Notes on what was not searched, for the model. */
  notes: string[];
}

/** The paths a change touches, computed from its repository between base and head. */
export interface CodeChangedPaths {
  /** At most the `max` asked for. */
  files: { path: string; status: 'added' | 'modified' | 'removed' }[];
  total: number;
}

/** One file's change computed from its repository between base and head (src/git/change-diff.ts). */
export interface CodePathDiff {
  path: string;
  status: 'added' | 'modified' | 'removed';
  binary: boolean;
  /** Bytes before and after (null: it did not exist). */
  oldSize: number | null;
  newSize: number | null;
  /** From its first `@@`, at most the characters asked for, cut at a line end. */
  diff: string;
  /** Characters of the whole diff. */
  chars: number;
}

/** Reads code by repository name; failures reject with an Error whose message the model may see. */
export interface CodeReader {
  /** The paths changed from `base` to `head` (full commit ids), at most `max`. */
  changedPaths?(repository: string, base: string, head: string, max: number): Promise<CodeChangedPaths>;
  /** One path's change from `base` to `head`; null when the change leaves it as it was. */
  pathDiff?(
    repository: string,
    base: string,
    head: string,
    path: string,
    maxChars: number,
  ): Promise<CodePathDiff | null>;
  list(
    repository: string,
    path: string,
    options: { glob?: string; exclude?: string; max: number },
  ): Promise<CodeListing>;
  read(repository: string, path: string): Promise<CodeFile>;
  search(repository: string, query: CodeSearchQuery): Promise<CodeSearchResult>;
}

export interface AgentChangeFile {
  path: string;
  previousPath: string | null;
  status: 'added' | 'modified' | 'removed' | 'renamed';
  additions: number | null;
  deletions: number | null;
  binary: boolean;
  diff: string | null;
  truncated: boolean;
}

/** Structurally git's `Change` (src/git/hosts/change.ts), and the repository it belongs to. */
export interface AgentChange {
  /** The context repository's name, or `docs` for the project's own. */
  repository: string;
  kind: 'pull-request' | 'commit' | 'range';
  number: number | null;
  url: string | null;
  title: string;
  description: string;
  author: string | null;
  state: 'open' | 'merged' | 'closed' | null;
  baseRef: string | null;
  headRef: string | null;
  baseSha: string | null;
  headSha: string;
  files: AgentChangeFile[];
  totalFiles: number | null;
  commits: { sha: string; message: string }[];
  totalCommits: number | null;
  notes: string[];
}
