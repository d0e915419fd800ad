/**
 * Code changes as the hosts give them (docs/code-context.mdx): a pull/merge request, a commit or a range of
 * commits, with its metadata, files, per-file diffs and commits; and the merged changes and
 * pushes of a branch since a cursor, for the polling fallback of automations (docs/automations.mdx).
 *
 * Everything here is bounded: a pull request of 10,000 files or a 50 MB diff gives at most
 * `maxFiles` files, `maxFileDiff` characters of diff per file and `maxTotalDiff` in all, and
 * says what it cut (`notes`, `truncated`, the totals). The bounds are the caller's to choose.
 */
import { isWebLink } from '../../web-link.ts';

/** Which change: a pull/merge request by number, a commit, or the commits from `base` to `head`. */
export type ChangeRef =
  | { kind: 'pull-request'; number: number }
  | { kind: 'commit'; sha: string }
  | { kind: 'range'; base: string; head: string };

export type ChangeKind = ChangeRef['kind'];

export type ChangeFileStatus = 'added' | 'modified' | 'removed' | 'renamed';

export interface ChangeFile {
  /** The path after the change (for a removed file, the path it had). */
  path: string;
  /** The path before a rename (or the source of a copy), else null. */
  previousPath: string | null;
  status: ChangeFileStatus;
  /** Lines added and removed; null when the host did not say (a diff it left out). */
  additions: number | null;
  deletions: number | null;
  /** A binary file (no text diff); hosts that do not say are judged by the missing diff. */
  binary: boolean;
  /** The file's unified diff from its first `@@` hunk header, or null when there is none to show. */
  diff: string | null;
  /** `diff` was cut to the bounds, or the host left it out for its size. */
  truncated: boolean;
}

export interface ChangeCommit {
  sha: string;
  /** The whole message, at most `maxText` characters. */
  message: string;
}

export interface Change {
  kind: ChangeKind;
  /** The pull/merge request's number; null for commits and ranges. */
  number: number | null;
  /** The change's web page (http(s) only; null when the host gave none that is). */
  url: string | null;
  title: string;
  /** The pull request's description, or the commit message after its first line. */
  description: string;
  /** The author's login (or name, for a commit without an account). */
  author: string | null;
  /** For pull/merge requests; null for commits and ranges. */
  state: 'open' | 'merged' | 'closed' | null;
  /** Branch names, when known (pull/merge requests). */
  baseRef: string | null;
  headRef: string | null;
  /** The commit the diff is taken against, when the host says. */
  baseSha: string | null;
  /** The change's head commit. */
  headSha: string;
  /** At most `maxFiles`, in the host's order. */
  files: ChangeFile[];
  /** How many files the change touches in all, when known (more than `files.length` when cut). */
  totalFiles: number | null;
  /** At most `maxCommits`, oldest first (what `Generated-By: docwright` is looked for in, docs/automations.mdx). */
  commits: ChangeCommit[];
  /** How many commits the change has in all, when known. */
  totalCommits: number | null;
  /** What was cut or left out, one sentence each, for the people and the model reading the change. */
  notes: string[];
}

export interface ChangeLimits {
  /** Files listed at most (default 300). */
  maxFiles: number;
  /** Characters of one file's diff kept (default 100,000). */
  maxFileDiff: number;
  /** Characters of diff kept over all files; later files get none (default 1,000,000). */
  maxTotalDiff: number;
  /** Commits listed at most (default 250). */
  maxCommits: number;
  /** Characters of a description or of one commit message kept (default 20,000). */
  maxText: number;
  /**
   * Characters of a raw diff read at most (Gitea, local), kept or not: reading costs no memory
   * past the bounds above, but time (default 256 Mi).
   */
  maxDiffRead: number;
}

export const DEFAULT_CHANGE_LIMITS: ChangeLimits = {
  maxFiles: 300,
  maxFileDiff: 100_000,
  maxTotalDiff: 1_000_000,
  maxCommits: 250,
  maxText: 20_000,
  maxDiffRead: 256 * 1024 * 1024,
};

export interface GetChangeOptions {
  limits?: Partial<ChangeLimits>;
  signal?: AbortSignal;
}

/** What a comment on a change became on the host. */
export interface ChangeComment {
  id: number;
  /** Its web address (http(s) only), when the host gave one. */
  url: string | null;
}

// ---------------------------------------------------------------------------------------------
// Merged changes and pushes (polling fallback)

/**
 * Where a listing of merged changes stopped, as plain JSON (store it as it is). Opaque to
 * callers: make the first with `startCursor`, then pass back each listing's `cursor`.
 */
export interface ChangeCursor {
  /** Merged pull requests up to this time (ISO 8601) have been listed. */
  mergedAt: string;
  /** The numbers of those merged at exactly `mergedAt` that were listed (hosts give seconds). */
  numbers: number[];
  /** The commit of the branch up to which pushes were listed; null: none yet (then by time). */
  sha: string | null;
}

/** A cursor before everything after `at`: earlier changes are never listed. */
export const startCursor = (at: Date): ChangeCursor => ({
  mergedAt: at.toISOString(),
  numbers: [],
  sha: null,
});

/** `value` as a cursor, or undefined when it is not one (a stored value from elsewhere). */
export function parseCursor(value: unknown): ChangeCursor | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const c = value as Record<string, unknown>;
  if (typeof c.mergedAt !== 'string' || Number.isNaN(Date.parse(c.mergedAt))) return undefined;
  if (!Array.isArray(c.numbers) || !c.numbers.every((n) => Number.isSafeInteger(n))) return undefined;
  if (c.sha !== null && (typeof c.sha !== 'string' || !/^[0-9a-f]{7,64}$/i.test(c.sha))) return undefined;
  return { mergedAt: c.mergedAt, numbers: c.numbers as number[], sha: c.sha as string | null };
}

export interface MergedChangesQuery {
  /** The branch the changes were merged or pushed into. */
  ref: string;
  /** Where the previous listing stopped (`startCursor` for the first). */
  since: ChangeCursor;
  /** Merged pull requests and pushes listed at most, each (default 50). */
  limit?: number;
  signal?: AbortSignal;
}

/** A pull/merge request merged into the branch. */
export interface MergedPullRequest {
  number: number;
  title: string;
  headRef: string;
  headSha: string | null;
  /** The commit the merge put on the branch (merge, squash or last rebased commit), when known. */
  mergeCommitSha: string | null;
  mergedAt: string;
  labels: string[];
  url: string | null;
}

/** A commit pushed to the branch directly (part of no merged pull request). */
export interface PushedCommit {
  sha: string;
  /** The message's first line. */
  title: string;
  committedAt: string | null;
  url: string | null;
}

export interface MergedChanges {
  /** Oldest first, after the cursor. */
  merged: MergedPullRequest[];
  /** Oldest first, after the cursor. */
  pushes: PushedCommit[];
  /** Where the next listing starts. */
  cursor: ChangeCursor;
  /** The limit was reached: more are waiting after `cursor`. */
  more: boolean;
  /** What could not be listed, one sentence each. */
  notes: string[];
}

export const DEFAULT_LISTING_LIMIT = 50;

// ---------------------------------------------------------------------------------------------
// Shared helpers of the host implementations

export const limitsOf = (options: GetChangeOptions = {}): ChangeLimits => ({
  ...DEFAULT_CHANGE_LIMITS,
  ...options.limits,
});

/** A web link from a host, or null when it is not http(s) (a broken or hostile host). */
export const webLink = (value: unknown): string | null => (isWebLink(value) ? value : null);

/** `text` cut to `max` characters, with a marker saying how much was left out. */
export function boundText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[… ${text.length - max} more characters not shown]`;
}

/** A commit message's first line and the rest (the commit's title and description). */
export function splitMessage(message: string): { title: string; description: string } {
  const newline = message.indexOf('\n');
  if (newline < 0) return { title: message.trim(), description: '' };
  return { title: message.slice(0, newline).trim(), description: message.slice(newline + 1).trim() };
}

/** The status words of the hosts (GitHub, GitLab, Gitea, git) as one of the four. */
export function fileStatus(word: string | undefined, previousPath: string | null): ChangeFileStatus {
  switch (word) {
    case 'added':
    case 'copied':
    case 'A':
    case 'C':
      return 'added';
    case 'removed':
    case 'deleted':
    case 'D':
      return 'removed';
    case 'renamed':
    case 'R':
      return 'renamed';
    default:
      return previousPath !== null ? 'renamed' : 'modified';
  }
}

/** Lines added and removed by a diff's hunks (from its first `@@`; header lines are not counted). */
export function countDiffLines(diff: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  let inHunk = false;
  let start = 0;
  while (start <= diff.length) {
    const end = diff.indexOf('\n', start);
    const line = diff.slice(start, end < 0 ? diff.length : end);
    if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) additions++;
    else if (inHunk && line.startsWith('-')) deletions++;
    if (end < 0) break;
    start = end + 1;
  }
  return { additions, deletions };
}

/** The text of a diff from its first hunk header (GitLab's `unidiff` and git's headers dropped). */
export function hunksOf(diff: string): string {
  if (diff.startsWith('@@')) return diff;
  const at = diff.indexOf('\n@@');
  return at < 0 ? '' : diff.slice(at + 1);
}

/** A file as a host describes it, before the bounds are applied. */
export type FileInput = Omit<ChangeFile, 'truncated'> & {
  /** The host said it left the diff out or cut it (too large, collapsed). */
  hostTruncated?: boolean;
};

/** The change of a commit or a range: no number, state or branches. */
export const commitChange = (fields: Omit<Change, 'number' | 'state' | 'baseRef' | 'headRef'>): Change => ({
  ...fields,
  number: null,
  state: null,
  baseRef: null,
  headRef: null,
});

/** The title and description of a range. */
export const rangeText = (base: string, head: string, commits: number) => ({
  title: `Changes from ${base} to ${head}`,
  description: `${commits} commit${commits === 1 ? '' : 's'}`,
});

/**
 * Keeps the files of a change within the limits: the first `maxFiles`, each diff cut at a line
 * end to `maxFileDiff` characters, and no more than `maxTotalDiff` over all of them; counts
 * what it was offered, and says what it cut.
 */
export class FileCollector {
  readonly files: ChangeFile[] = [];
  /** Files offered, kept or not. */
  offered = 0;
  #diffUsed = 0;
  #diffCut = 0;
  readonly #limits: ChangeLimits;

  constructor(limits: ChangeLimits) {
    this.#limits = limits;
  }

  /** Whether the list is full: more files are only counted. */
  get full(): boolean {
    return this.files.length >= this.#limits.maxFiles;
  }

  /** How many more files are kept. */
  get room(): number {
    return Math.max(0, this.#limits.maxFiles - this.files.length);
  }

  /** Whether the diff budget is spent: later files get no diff. */
  get diffSpent(): boolean {
    return this.#diffUsed >= this.#limits.maxTotalDiff;
  }

  add(file: FileInput): void {
    this.offered++;
    if (this.full) return;
    // Hosts differ on the last line end (GitHub leaves it out): every diff here ends with one.
    let diff =
      file.diff === null || file.diff === '' || file.diff.endsWith('\n') ? file.diff : `${file.diff}\n`;
    let truncated = file.hostTruncated ?? false;
    if (diff === '') diff = null;
    if (diff !== null) {
      const room = Math.min(this.#limits.maxFileDiff, this.#limits.maxTotalDiff - this.#diffUsed);
      if (diff.length > room) {
        diff = cutAtLine(diff, room);
        truncated = true;
        this.#diffCut++;
      }
      if (diff === '' && truncated) diff = null;
      this.#diffUsed += diff?.length ?? 0;
    }
    this.files.push({
      path: file.path,
      previousPath: file.previousPath,
      status: file.status,
      additions: file.additions,
      deletions: file.deletions,
      binary: file.binary,
      diff,
      truncated,
    });
  }

  /** What was cut, given the host's count of files when it has one. */
  notes(totalFiles: number | null): string[] {
    const notes: string[] = [];
    const total = totalFiles ?? this.offered;
    if (total > this.files.length) {
      notes.push(`showing ${this.files.length} of ${total} changed files`);
    }
    if (this.#diffCut > 0) {
      notes.push(
        `the diffs of ${this.#diffCut} file${this.#diffCut === 1 ? ' was' : 's were'} cut to the size limit`,
      );
    }
    return notes;
  }
}

/** `text` cut to at most `max` characters at a line end (nothing when not even one line fits). */
function cutAtLine(text: string, max: number): string {
  if (max <= 0) return '';
  const end = text.lastIndexOf('\n', max - 1);
  return end < 0 ? '' : text.slice(0, end + 1);
}

/** Commits kept to the limits (each message bounded), with a note when there were more. */
export function boundCommits(
  commits: ChangeCommit[],
  limits: ChangeLimits,
  total: number | null,
): { commits: ChangeCommit[]; notes: string[] } {
  const kept = commits
    .slice(0, limits.maxCommits)
    // Hosts differ on a message's last line end (git keeps it): none here.
    .map((c) => ({ sha: c.sha, message: boundText(c.message.replace(/\s+$/, ''), limits.maxText) }));
  const all = Math.max(total ?? 0, commits.length);
  return {
    commits: kept,
    notes: all > kept.length ? [`showing ${kept.length} of ${all} commits`] : [],
  };
}
