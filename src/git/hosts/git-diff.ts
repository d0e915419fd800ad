/**
 * A reader of git's diff format (`git diff` output, Gitea's `.diff` answers) fed one line at a
 * time: it splits the diff into files, tells each file's paths, status, binary-ness and line
 * counts, and keeps its hunks up to a bound. It holds one file's kept hunks at a time, so a
 * 50 MB diff read through it costs no more memory than a small one.
 */
import type { ChangeFileStatus } from './change.ts';

export interface DiffFile {
  path: string;
  previousPath: string | null;
  status: ChangeFileStatus;
  binary: boolean;
  additions: number;
  deletions: number;
  /** The hunks (from the first `@@`), at most `maxFileDiff` characters, cut at a line end. */
  diff: string;
  truncated: boolean;
}

interface Current {
  header: string;
  from: string | null;
  to: string | null;
  renamedFrom: string | null;
  renamedTo: string | null;
  copied: boolean;
  created: boolean;
  deleted: boolean;
  binary: boolean;
  inHunks: boolean;
  additions: number;
  deletions: number;
  diff: string;
  truncated: boolean;
}

/** A path as git writes it: `"…"` with C escapes (octal bytes of UTF-8) when it has special characters. */
export function unquoteGitPath(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      const octal = /^[0-7]{1,3}/.exec(body.slice(i + 1))![0];
      bytes.push(Number.parseInt(octal, 8) & 0xff);
      i += octal.length;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `a/path` or `b/path` (or `/dev/null`) without its prefix; null for `/dev/null`. */
function sidePath(text: string): string | null {
  const path = unquoteGitPath(text.replace(/\t.*$/, '').trim());
  if (path === '/dev/null') return null;
  return path.replace(/^[ab]\//, '');
}

/** The path of a `diff --git a/x b/x` header whose two sides are the same file (no rename). */
function headerPath(header: string): string | null {
  const rest = header.slice('diff --git '.length);
  if (rest.startsWith('"')) {
    const close = rest.indexOf('" ', 1);
    return close < 0 ? null : sidePath(rest.slice(0, close + 1));
  }
  // Unquoted: "a/<p> b/<p>"; the two halves have the same length.
  const half = (rest.length - 1) / 2;
  if (!Number.isInteger(half) || rest[half] !== ' ') return null;
  return sidePath(rest.slice(0, half));
}

export class GitDiffReader {
  readonly #maxFileDiff: number;
  readonly #maxRead: number;
  readonly #onFile: (file: DiffFile) => boolean | undefined;
  #current: Current | undefined;
  #read = 0;
  #stopped = false;

  /**
   * `onFile` gets each file once it has been read; answering `false` stops the reader. Past
   * `maxRead` characters the reader stops too, and the file it was reading is left out (its
   * counts are not known).
   */
  constructor(options: {
    maxFileDiff: number;
    maxRead?: number;
    onFile: (file: DiffFile) => boolean | undefined;
  }) {
    this.#maxFileDiff = options.maxFileDiff;
    this.#maxRead = options.maxRead ?? Number.POSITIVE_INFINITY;
    this.#onFile = options.onFile;
  }

  /** Whether the reader has stopped (asked to, or past `maxRead`): the rest of the diff is not wanted. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Takes the next line; false once the reader has stopped. */
  line(line: string): boolean {
    if (this.#stopped) return false;
    this.#read += line.length + 1;
    if (this.#read > this.#maxRead) {
      this.#stopped = true;
      return false;
    }
    if (line.startsWith('diff --git ')) {
      this.#finish();
      if (this.#stopped) return false;
      this.#current = {
        header: line,
        from: null,
        to: null,
        renamedFrom: null,
        renamedTo: null,
        copied: false,
        created: false,
        deleted: false,
        binary: false,
        inHunks: false,
        additions: 0,
        deletions: 0,
        diff: '',
        truncated: false,
      };
      return true;
    }
    const file = this.#current;
    if (!file) return true;
    if (file.inHunks || line.startsWith('@@')) {
      file.inHunks = true;
      if (line.startsWith('+')) file.additions++;
      else if (line.startsWith('-')) file.deletions++;
      this.#keep(file, line);
      return true;
    }
    if (line.startsWith('--- ')) file.from = sidePath(line.slice(4));
    else if (line.startsWith('+++ ')) file.to = sidePath(line.slice(4));
    else if (line.startsWith('rename from ')) file.renamedFrom = unquoteGitPath(line.slice(12));
    else if (line.startsWith('rename to ')) file.renamedTo = unquoteGitPath(line.slice(10));
    else if (line.startsWith('copy from ')) {
      file.renamedFrom = unquoteGitPath(line.slice(10));
      file.copied = true;
    } else if (line.startsWith('copy to ')) file.renamedTo = unquoteGitPath(line.slice(8));
    else if (line.startsWith('new file mode')) file.created = true;
    else if (line.startsWith('deleted file mode')) file.deleted = true;
    else if (line.startsWith('Binary files ') || line === 'GIT binary patch') file.binary = true;
    return true;
  }

  /** The diff has ended: the last file is handed on (unless the reader had stopped). */
  end(): void {
    if (!this.#stopped) this.#finish();
  }

  #keep(file: Current, line: string) {
    if (file.truncated) return;
    if (file.diff.length + line.length + 1 > this.#maxFileDiff) {
      file.truncated = true;
      return;
    }
    file.diff += `${line}\n`;
  }

  #finish() {
    const file = this.#current;
    this.#current = undefined;
    if (!file) return;
    const previous = file.renamedFrom ?? (file.created ? null : file.from);
    const path = file.renamedTo ?? file.to ?? file.from ?? previous ?? headerPath(file.header) ?? '';
    const status: ChangeFileStatus = file.created
      ? 'added'
      : file.deleted
        ? 'removed'
        : file.renamedFrom !== null && !file.copied
          ? 'renamed'
          : file.copied
            ? 'added'
            : 'modified';
    const renamed = file.renamedFrom !== null && file.renamedFrom !== path;
    if (
      this.#onFile({
        path,
        previousPath: renamed ? file.renamedFrom : null,
        status,
        binary: file.binary,
        additions: file.additions,
        deletions: file.deletions,
        diff: file.diff,
        truncated: file.truncated,
      }) === false
    ) {
      this.#stopped = true;
    }
  }
}
