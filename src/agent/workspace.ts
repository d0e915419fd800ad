/**
 * The agent's workspace: the path guard and the state of one run.
 *
 * Every tool goes through it, so the guard lives in code, not in the prompt:
 * paths are relative POSIX paths inside the repository, never absolute, never
 * through `..`, a NUL, a backslash, a symbolic link, `.git` or `.github`;
 * writes only inside `docsDir` and matching a `writable` glob, within the size
 * caps. It also remembers what the model read (an existing file is overwritten
 * or edited only after a read of its current content) and what it changed, and
 * checks the final set of changed files once more before anything is committed.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';
import { type AgentLimits, type AgentProjectSettings, ToolError } from './types.ts';

export interface LocateOptions {
  /** Apply the write guard (docsDir, writable globs). */
  write?: boolean;
  /** Size of the file after the write, checked against the per-file cap. */
  bytes?: number;
  /** Bytes charged to the run for this write (default: `bytes`), checked against the per-run cap. */
  charge?: number;
}

export interface Located {
  /** Absolute path under the real repository root. */
  absolute: string;
  /** Normalised repository-relative POSIX path ('.' for the root). */
  relative: string;
}

export interface WalkResult {
  /** Repository-relative file paths, sorted. */
  files: string[];
  /** True when the walk stopped at `maxWalkEntries`. */
  truncated: boolean;
}

/** Directory names never listed or searched (besides what .gitignore says). */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);
/** Path segments the agent may never touch, compared case-insensitively. */
const FORBIDDEN_SEGMENTS = new Set(['.git', '.github']);
/** A walk stops after this many files, so a huge tree cannot stall a tool. */
const MAX_WALK_ENTRIES = 200_000;

export class Workspace {
  /** The real (symlink-free) absolute path of the repository root. */
  readonly root: string;
  readonly project: AgentProjectSettings;
  readonly limits: AgentLimits;
  /** Set by the finish tool. */
  finished: { title: string; summary: string } | null = null;

  readonly #docsDir: string;
  readonly #isWritable: (relative: string) => boolean;
  /** Hash of each file's content as last read (or written) in this run. */
  readonly #reads = new Map<string, string>();
  /** Hash of each touched file's content before the run changed it (null: absent). */
  readonly #originals = new Map<string, string | null>();
  #written = 0;

  private constructor(root: string, project: AgentProjectSettings, limits: AgentLimits) {
    this.root = root;
    this.project = project;
    this.limits = limits;
    this.#docsDir = normaliseDocsDir(project.docsDir);
    const matchers = project.writable.map((glob) => picomatch(glob));
    const docsPrefix = this.#docsDir === '.' ? '' : `${this.#docsDir}/`;
    this.#isWritable = (relative) =>
      matchers.some(
        (match) =>
          match(relative) ||
          (docsPrefix !== '' && relative.startsWith(docsPrefix) && match(relative.slice(docsPrefix.length))),
      );
  }

  /** Resolves the real root once; `root` must be an existing directory. */
  static async open(root: string, project: AgentProjectSettings, limits: AgentLimits): Promise<Workspace> {
    const real = await realpath(root);
    if (!lstatSync(real).isDirectory()) throw new Error(`Workspace root ${root} is not a directory`);
    return new Workspace(real, project, limits);
  }

  /** The normalised documentation directory ('.' = the repository root). */
  get docsDir(): string {
    return this.#docsDir;
  }

  /** Bytes charged to this run by writes so far. */
  get bytesWritten(): number {
    return this.#written;
  }

  /** The absolute path of `input`, or a ToolError saying precisely why it is refused. */
  resolve(input: string, options: LocateOptions = {}): string {
    return this.locate(input, options).absolute;
  }

  /** Like `resolve`, with the normalised relative path as well. */
  locate(input: string, options: LocateOptions = {}): Located {
    const relative = normaliseInput(input);
    const segments = relative === '.' ? [] : relative.split('/');
    const forbidden = segments.find((s) => FORBIDDEN_SEGMENTS.has(s.toLowerCase()));
    if (forbidden !== undefined) {
      throw new ToolError(`Path "${input}" is inside ${forbidden}/, which the agent may not access.`);
    }
    // Walk from the real root with lstat: no existing component may be a symbolic link.
    let current = this.root;
    for (let i = 0; i < segments.length; i++) {
      current = path.join(current, segments[i]!);
      let stats: Stats;
      try {
        stats = lstatSync(current);
      } catch (error) {
        if (isCode(error, 'ENOENT')) break;
        if (isCode(error, 'ENOTDIR')) {
          throw new ToolError(
            `Path "${input}": ${segments.slice(0, i).join('/')} is a file, not a directory.`,
          );
        }
        throw error;
      }
      if (stats.isSymbolicLink()) {
        const link = segments.slice(0, i + 1).join('/');
        throw new ToolError(
          link === relative
            ? `Path "${input}" is a symbolic link; symbolic links are not followed.`
            : `Path "${input}" goes through a symbolic link (${link}); symbolic links are not followed.`,
        );
      }
      if (i < segments.length - 1 && !stats.isDirectory()) {
        throw new ToolError(
          `Path "${input}": ${segments.slice(0, i + 1).join('/')} is a file, not a directory.`,
        );
      }
    }
    const absolute = segments.length === 0 ? this.root : path.join(this.root, ...segments);
    if (options.write) this.#checkWrite(input, relative, options);
    return { absolute, relative };
  }

  #checkWrite(input: string, relative: string, options: LocateOptions): void {
    if (relative === '.') throw new ToolError('Cannot write the repository root; name a file.');
    if (this.#docsDir !== '.' && relative !== this.#docsDir && !relative.startsWith(`${this.#docsDir}/`)) {
      throw new ToolError(
        `Cannot write "${input}": writes are limited to the documentation directory "${this.#docsDir}/".`,
      );
    }
    if (!this.#isWritable(relative)) {
      throw new ToolError(
        `Cannot write "${input}": it matches none of the writable patterns (${this.project.writable.join(', ')}).`,
      );
    }
    const { bytes, charge = bytes } = options;
    if (bytes !== undefined && bytes > this.limits.maxFileBytes) {
      throw new ToolError(
        `Cannot write "${input}": the file would be ${formatBytes(bytes)}, over the limit of ${formatBytes(this.limits.maxFileBytes)} per file.`,
      );
    }
    if (charge !== undefined && this.#written + charge > this.limits.maxTotalWriteBytes) {
      throw new ToolError(
        `Cannot write "${input}": this run has written ${formatBytes(this.#written)}; ${formatBytes(charge)} more would exceed the limit of ${formatBytes(this.limits.maxTotalWriteBytes)} per run.`,
      );
    }
  }

  /** Records that the model saw `content` as the current content of `path`. */
  markRead(input: string, content: string | Buffer): void {
    this.#reads.set(normaliseInput(input), hash(content));
  }

  /** Throws unless `path` was read in this run and is unchanged on disk since. */
  assertReadAndUnchanged(input: string): void {
    const { absolute, relative } = this.locate(input);
    const seen = this.#reads.get(relative);
    if (seen === undefined) {
      throw new ToolError(
        `"${relative}" has not been read in this run; read it with read_file before changing it.`,
      );
    }
    const now = readHash(absolute);
    if (now !== seen) {
      throw new ToolError(
        `"${relative}" has changed since it was last read; read it again with read_file before changing it.`,
      );
    }
  }

  /** The file's bytes, or a ToolError (missing: with suggestions; directory; over the read cap). */
  readFile(input: string): Located & { bytes: Buffer } {
    const located = this.locate(input);
    const stats = this.#stat(located.absolute);
    if (stats === null) throw new ToolError(this.notFoundMessage(located.relative));
    if (stats.isDirectory()) {
      throw new ToolError(`"${located.relative}" is a directory; use list_files to see what it holds.`);
    }
    if (!stats.isFile()) throw new ToolError(`"${located.relative}" is not a regular file.`);
    if (stats.size > this.limits.maxFileBytes) {
      throw new ToolError(
        `"${located.relative}" is ${formatBytes(stats.size)}, over the limit of ${formatBytes(this.limits.maxFileBytes)}; use search to find the lines you need.`,
      );
    }
    return { ...located, bytes: readNoFollow(located.absolute) };
  }

  /**
   * Creates or overwrites a file. An existing file must have been read in this
   * run and be unchanged since. `charge` is what the write counts against the
   * per-run cap (default: the whole content).
   */
  writeFile(input: string, content: string, charge?: number): Located & { created: boolean } {
    const data = Buffer.from(content, 'utf8');
    const located = this.locate(input, { write: true, bytes: data.length, charge: charge ?? data.length });
    const stats = this.#stat(located.absolute);
    if (stats?.isDirectory()) throw new ToolError(`"${located.relative}" is a directory, not a file.`);
    if (stats !== null) this.assertReadAndUnchanged(located.relative);
    this.#rememberOriginal(located);
    mkdirSync(path.dirname(located.absolute), { recursive: true });
    this.locate(located.relative, { write: true }); // the directories just made hold no link
    atomicWrite(located.absolute, data, stats?.mode);
    this.#written += charge ?? data.length;
    this.#reads.set(located.relative, hash(data));
    return { ...located, created: stats === null };
  }

  /** Deletes a writable file. */
  deleteFile(input: string): Located {
    const located = this.locate(input, { write: true });
    const stats = this.#stat(located.absolute);
    if (stats === null) throw new ToolError(this.notFoundMessage(located.relative));
    if (!stats.isFile())
      throw new ToolError(`"${located.relative}" is not a file; only files can be deleted.`);
    this.#rememberOriginal(located);
    unlinkSync(located.absolute);
    this.#reads.delete(located.relative);
    return located;
  }

  /** Renames a writable file to a writable path that does not exist yet. */
  moveFile(fromInput: string, toInput: string): { from: Located; to: Located } {
    const from = this.locate(fromInput, { write: true });
    const to = this.locate(toInput, { write: true });
    const stats = this.#stat(from.absolute);
    if (stats === null) throw new ToolError(this.notFoundMessage(from.relative));
    if (!stats.isFile()) throw new ToolError(`"${from.relative}" is not a file; only files can be moved.`);
    if (from.relative === to.relative)
      throw new ToolError('The source and the destination are the same path.');
    if (this.#stat(to.absolute) !== null) {
      throw new ToolError(`"${to.relative}" already exists; choose another destination or delete it first.`);
    }
    this.#rememberOriginal(from);
    this.#rememberOriginal(to);
    mkdirSync(path.dirname(to.absolute), { recursive: true });
    this.locate(to.relative, { write: true });
    renameSync(from.absolute, to.absolute);
    const seen = this.#reads.get(from.relative);
    this.#reads.delete(from.relative);
    if (seen !== undefined) this.#reads.set(to.relative, seen);
    return { from, to };
  }

  /** Repository-relative paths whose content differs from the start of the run, sorted. */
  changedFiles(): string[] {
    const changed: string[] = [];
    for (const [relative, original] of this.#originals) {
      if (readHash(path.join(this.root, relative)) !== original) changed.push(relative);
    }
    return changed.sort(compareStrings);
  }

  /**
   * The second check, before anything is committed: every changed path must
   * still pass the write guard (symbolic links re-checked on disk), be a
   * regular file within the size cap or absent, and — when `paths` comes from
   * elsewhere (e.g. `git status`) — be one the tools changed. Returns the
   * problems found; empty means all is well.
   */
  verifyChanges(paths: readonly string[] = this.changedFiles()): string[] {
    const problems: string[] = [];
    const own = new Set(this.changedFiles());
    for (const p of paths) {
      try {
        const { absolute, relative } = this.locate(p, { write: true });
        if (!own.has(relative)) problems.push(`${p}: changed, but not by the agent's tools`);
        const stats = this.#stat(absolute);
        if (stats === null) continue;
        if (!stats.isFile()) problems.push(`${p}: not a regular file`);
        else if (stats.size > this.limits.maxFileBytes) {
          problems.push(
            `${p}: ${formatBytes(stats.size)}, over the limit of ${formatBytes(this.limits.maxFileBytes)}`,
          );
        }
      } catch (error) {
        if (!(error instanceof ToolError)) throw error;
        problems.push(`${p}: ${error.message}`);
      }
    }
    if (this.#written > this.limits.maxTotalWriteBytes) {
      problems.push(
        `the run wrote ${formatBytes(this.#written)}, over ${formatBytes(this.limits.maxTotalWriteBytes)}`,
      );
    }
    return problems;
  }

  /**
   * Files under `dir` (repository-relative, already validated), sorted; skips
   * `.git`, `.github`, `node_modules`, symbolic links and what the repository's
   * `.gitignore` files (and `.git/info/exclude`) ignore.
   */
  walk(dir: string): WalkResult {
    const { absolute, relative } = this.locate(dir);
    const stats = this.#stat(absolute);
    if (stats === null) {
      throw new ToolError(`No such file or directory: "${relative}". Use list_files to see what exists.`);
    }
    const files: string[] = [];
    let truncated = false;
    if (stats.isFile()) return { files: [relative], truncated };
    // The ignore rules of the ancestors of `dir`, root first.
    const rules: IgnoreRules[] = [];
    const exclude = readIgnoreFile(path.join(this.root, '.git', 'info', 'exclude'));
    if (exclude) rules.push({ base: '', matcher: exclude });
    const segments = relative === '.' ? [] : relative.split('/');
    for (let i = 0; i < segments.length; i++) {
      const base = segments.slice(0, i).join('/');
      const matcher = readIgnoreFile(path.join(this.root, base, '.gitignore'));
      if (matcher) rules.push({ base, matcher });
      if (isIgnored(rules, segments.slice(0, i + 1).join('/'), true)) return { files, truncated };
    }
    const visit = (abs: string, rel: string, inherited: IgnoreRules[]): void => {
      let entries: Dirent[];
      try {
        entries = readdirSync(abs, { withFileTypes: true });
      } catch {
        return;
      }
      let active = inherited;
      if (entries.some((e) => e.name === '.gitignore' && e.isFile())) {
        const matcher = readIgnoreFile(path.join(abs, '.gitignore'));
        if (matcher) active = [...inherited, { base: rel === '.' ? '' : rel, matcher }];
      }
      for (const entry of entries) {
        if (truncated) return;
        const childRel = rel === '.' ? entry.name : `${rel}/${entry.name}`;
        if (entry.isDirectory()) {
          if (SKIPPED_DIRECTORIES.has(entry.name) || FORBIDDEN_SEGMENTS.has(entry.name.toLowerCase()))
            continue;
          if (isIgnored(active, childRel, true)) continue;
          visit(path.join(abs, entry.name), childRel, active);
        } else if (entry.isFile()) {
          if (isIgnored(active, childRel, false)) continue;
          if (files.length >= MAX_WALK_ENTRIES) {
            truncated = true;
            return;
          }
          files.push(childRel);
        }
      }
    };
    if (stats.isDirectory()) visit(absolute, relative, rules);
    files.sort(compareStrings);
    return { files, truncated };
  }

  /** Up to `limit` existing files whose name resembles `relative`'s, best first. */
  suggest(relative: string, limit = 5): string[] {
    const wanted = path.posix.basename(relative).toLowerCase();
    const wantedStem = stem(wanted);
    const scored: { file: string; score: number }[] = [];
    for (const file of this.walk('.').files) {
      const name = path.posix.basename(file).toLowerCase();
      let score = 1 - levenshtein(wanted, name) / Math.max(wanted.length, name.length, 1);
      const nameStem = stem(name);
      if (nameStem === wantedStem) score = Math.max(score, 0.9);
      else if (
        Math.min(nameStem.length, wantedStem.length) >= 4 &&
        (nameStem.includes(wantedStem) || wantedStem.includes(nameStem))
      ) {
        score = Math.max(score, 0.6);
      }
      if (score >= 0.5) scored.push({ file, score: score + sharedDirectoryBonus(relative, file) });
    }
    scored.sort((a, b) => b.score - a.score || compareStrings(a.file, b.file));
    return scored.slice(0, limit).map((s) => s.file);
  }

  /** "File not found: x. Did you mean: …?" */
  notFoundMessage(relative: string): string {
    const suggestions = this.suggest(relative);
    return suggestions.length > 0
      ? `File not found: ${relative}. Did you mean one of these?\n${suggestions.map((s) => `  ${s}`).join('\n')}`
      : `File not found: ${relative}. Use list_files to see which files exist.`;
  }

  #stat(absolute: string): Stats | null {
    try {
      return lstatSync(absolute);
    } catch (error) {
      if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return null;
      throw error;
    }
  }

  #rememberOriginal(located: Located): void {
    if (!this.#originals.has(located.relative)) {
      this.#originals.set(located.relative, readHash(located.absolute));
    }
  }
}

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
  return segments.length === 0 ? '.' : segments.join('/');
}

function normaliseDocsDir(docsDir: string): string {
  try {
    return normaliseInput(docsDir || '.');
  } catch (error) {
    throw new Error(`Invalid docsDir "${docsDir}": ${(error as Error).message}`);
  }
}

interface IgnoreRules {
  /** Directory of the .gitignore, repository-relative ('' for the root). */
  base: string;
  matcher: Ignore;
}

function readIgnoreFile(file: string): Ignore | null {
  try {
    if (!lstatSync(file).isFile()) return null;
    return ignore().add(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Git's rule, closely enough: the deepest .gitignore that decides wins. */
function isIgnored(rules: IgnoreRules[], relative: string, directory: boolean): boolean {
  let ignored = false;
  for (const { base, matcher } of rules) {
    const local = base === '' ? relative : relative.slice(base.length + 1);
    const result = matcher.test(directory ? `${local}/` : local);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

function readNoFollow(absolute: string): Buffer {
  const fd = openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(size);
    let offset = 0;
    while (offset < size) {
      const n = readSync(fd, buffer, offset, size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return offset === size ? buffer : buffer.subarray(0, offset);
  } finally {
    closeSync(fd);
  }
}

/** Writes through a temporary file and a rename: never through a link, never half a file. */
function atomicWrite(absolute: string, data: Buffer, mode: number | undefined): void {
  const temporary = path.join(
    path.dirname(absolute),
    `.${path.basename(absolute)}.docwright-${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    writeFileSync(temporary, data, { flag: 'wx', mode: mode === undefined ? 0o644 : mode & 0o777 });
    renameSync(temporary, absolute);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {}
    throw error;
  }
}

function hash(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('base64');
}

/** Hash of a regular file's content, or null when there is none. */
function readHash(absolute: string): string | null {
  try {
    if (!lstatSync(absolute).isFile()) return null;
    return hash(readNoFollow(absolute));
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR') || isCode(error, 'ELOOP')) return null;
    throw error;
  }
}

function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === code;
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** "512 bytes", "1 MiB", "1.5 KiB"; exact bytes where one decimal would hide a difference. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return bytes === 1 ? '1 byte' : `${bytes} bytes`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KiB'] : [bytes / (1024 * 1024), 'MiB'];
  if (Number.isInteger(value)) return `${value} ${unit}`;
  const rounded = value.toFixed(1);
  return rounded.endsWith('.0') ? `${bytes.toLocaleString('en-US')} bytes` : `${rounded} ${unit}`;
}

function stem(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

function sharedDirectoryBonus(a: string, b: string): number {
  return path.posix.dirname(a) === path.posix.dirname(b) ? 0.05 : 0;
}

/** Edit distance, two rows. */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}
