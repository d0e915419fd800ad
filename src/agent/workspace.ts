/**
 * The agent's workspace: the path guard and the state of one run (path syntax in paths.ts,
 * link-free file access in safe-files.ts, the walker in walk.ts).
 *
 * Every tool goes through it, so the guard lives in code, not in the prompt:
 * paths are relative POSIX paths inside the repository, never absolute, never
 * through `..`, a NUL, a backslash, a symbolic link, `.git` or `.github`;
 * writes only inside `docsDir` and matching a `writable` glob, within the size
 * caps. It also remembers what the model read (an existing file is overwritten
 * or edited only after a read of its current content) and what it changed, and
 * checks the final set of changed files once more before anything is committed.
 */

import { lstatSync, mkdirSync, renameSync, type Stats, unlinkSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { compileGlob } from '../glob.ts';
import { type CodeAccess, readOnlyCodeRefusal } from './code.ts';
import { EditHistory } from './edit/history.ts';
import { formatBytes } from './format.ts';
import { compareStrings, FORBIDDEN_SEGMENTS, normaliseInput } from './paths.ts';
import { atomicWrite, contentHash, isCode, isEmptyDirectory, readHash, readNoFollow } from './safe-files.ts';
import { similarFiles } from './suggestions.ts';
import { type AgentAnswer, type AgentLimits, type AgentProjectSettings, ToolError } from './types.ts';
import type { RunChanges } from './verify/types.ts';
import { type WalkResult, walkFiles } from './walk.ts';

export type { WalkResult };

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

/** A walk stops after this many files, so a huge tree cannot stall a tool. */
const MAX_WALK_ENTRIES = 200_000;

export class Workspace {
  /** The real (symlink-free) absolute path of the repository root. */
  readonly root: string;
  readonly project: AgentProjectSettings;
  readonly limits: AgentLimits;
  /** Set by the finish tool. */
  finished: { title: string; summary: string } | null = null;
  /** Set by the answer tool (an ask job, docs/questions.mdx). */
  answered: AgentAnswer | null = null;
  /** The code the run may read (never write), when there is any (see code.ts). */
  code: CodeAccess | undefined;
  /** What the files edited held before, so that a stale old_string can be told apart (edit/history.ts). */
  readonly editHistory = new EditHistory();

  readonly #docsDir: string;
  readonly #isWritable: (relative: string) => boolean;
  /** Files written as the writable globs allow files like them (Mintlify's `$ref` navigation files). */
  readonly #alsoWritable = new Set<string>();
  /** Hash of each file's content as last read (or written) in this run. */
  readonly #reads = new Map<string, string>();
  /** Hash of each touched file's content before the run changed it (null: absent). */
  readonly #originals = new Map<string, string | null>();
  /** The text of each touched file before the run changed it (null: absent), for verification's base tree. */
  readonly #originalTexts = new Map<string, string | null>();
  /** The renames of the run, in order. */
  readonly #moves: { from: string; to: string }[] = [];
  #written = 0;

  private constructor(root: string, project: AgentProjectSettings, limits: AgentLimits) {
    this.root = root;
    this.project = project;
    this.limits = limits;
    this.#docsDir = normaliseDocsDir(project.docsDir);
    const matchers = project.writable.map((glob) => compileGlob(glob));
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

  /**
   * Makes the files that hold the site's navigation writable where its configuration is: a new
   * page is named in the `$ref` file of its section, which the writable globs cannot know of.
   */
  allowNavigationFiles(configFile: string, files: readonly string[]): void {
    if (!this.#isWritable(configFile)) return;
    for (const file of files) this.#alsoWritable.add(file);
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
    if (options.write) {
      this.#checkWrite(input, relative, options);
      this.#checkNotInSubmodule(input, segments);
    }
    return { absolute, relative };
  }

  /**
   * Refuses a write inside a git submodule: a checked-out one holds a `.git` entry, one that
   * is not checked out is an empty directory (git never creates empty directories otherwise).
   * Its files belong to another repository; writing them here could never be committed.
   */
  #checkNotInSubmodule(input: string, segments: string[]): void {
    let current = this.root;
    for (let i = 0; i < segments.length - 1; i++) {
      current = path.join(current, segments[i]!);
      const relativeDir = segments.slice(0, i + 1).join('/');
      if (this.#stat(current) === null) return;
      const refuse = () => {
        throw new ToolError(
          `Cannot write "${input}": ${relativeDir} is a git submodule (another repository); its files cannot be changed here.`,
        );
      };
      if (this.#stat(path.join(current, '.git')) !== null) refuse();
      if (isEmptyDirectory(current) && !this.#touchedUnder(relativeDir)) refuse();
    }
  }

  /** Whether this run changed a file under `dir` (and so may have emptied it). */
  #touchedUnder(dir: string): boolean {
    for (const relative of this.#originals.keys()) if (relative.startsWith(`${dir}/`)) return true;
    return false;
  }

  #checkWrite(input: string, relative: string, options: LocateOptions): void {
    if (relative === '.') throw new ToolError('Cannot write the repository root; name a file.');
    const readOnly = readOnlyCodeRefusal(input, relative, this.#docsDir, this.code);
    if (readOnly) throw new ToolError(readOnly);
    if (this.#docsDir !== '.' && relative !== this.#docsDir && !relative.startsWith(`${this.#docsDir}/`)) {
      throw new ToolError(
        `Cannot write "${input}": writes are limited to the documentation directory "${this.#docsDir}/".${this.code ? ' The code outside it is read-only.' : ''}`,
      );
    }
    if (this.project.readOnly?.includes(relative)) {
      throw new ToolError(`Cannot write "${input}": it is code the change touched, which is read-only.`);
    }
    if (!this.#isWritable(relative) && !this.#alsoWritable.has(relative)) {
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
    this.#reads.set(normaliseInput(input), contentHash(content));
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
    this.#reads.set(located.relative, contentHash(data));
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
    this.#moves.push({ from: from.relative, to: to.relative });
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

  /** What the run changed, for verification: changed and deleted files, and the renames. */
  runChanges(): RunChanges {
    const changed: string[] = [];
    const deleted: string[] = [];
    for (const file of this.changedFiles())
      (this.#stat(path.join(this.root, file)) === null ? deleted : changed).push(file);
    // Renames in a chain (a → b → c) are one (a → c); one undone (a → b → a) is none.
    const chained: { from: string; to: string }[] = [];
    for (const move of this.#moves) {
      const earlier = chained.find((m) => m.to === move.from);
      if (earlier) earlier.to = move.to;
      else chained.push({ ...move });
    }
    const moved = chained.filter((m) => deleted.includes(m.from) && changed.includes(m.to));
    return { changed, deleted, moved };
  }

  /** The text before the run of each file it changed (null: the run created it). */
  originalTexts(): Map<string, string | null> {
    const changed = new Set(this.changedFiles());
    return new Map([...this.#originalTexts].filter(([file]) => changed.has(file)));
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
   * Files under `dir` (repository-relative, checked by the path guard), sorted; skips
   * `.git`, `.github`, `node_modules`, symbolic links and what the repository's
   * `.gitignore` files (and `.git/info/exclude`) ignore (src/agent/walk.ts).
   */
  walk(dir: string, options: { deadline?: number | undefined } = {}): WalkResult {
    const { absolute, relative } = this.locate(dir);
    const stats = this.#stat(absolute);
    if (stats === null) {
      throw new ToolError(`No such file or directory: "${relative}". Use list_files to see what exists.`);
    }
    if (stats.isFile()) return { files: [relative], truncated: false };
    if (!stats.isDirectory()) return { files: [], truncated: false };
    return walkFiles(this.root, relative, { maxFiles: MAX_WALK_ENTRIES, deadline: options.deadline });
  }

  /** Up to `limit` existing files whose name resembles `relative`'s, best first. */
  suggest(
    relative: string,
    limit = 5,
    deadline = Date.now() + Math.min(2_000, this.limits.maxToolMs),
  ): string[] {
    let files: string[];
    try {
      files = this.walk('.', { deadline }).files;
    } catch (error) {
      if (error instanceof ToolError) return [];
      throw error;
    }
    return similarFiles(relative, files, limit, deadline);
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
    if (this.#originals.has(located.relative)) return;
    if (this.#originals.size >= this.limits.maxChangedFiles) {
      throw new ToolError(
        `Cannot change "${located.relative}": this run has already changed ${this.#originals.size} files, the most one run may change. Finish with what is done, or change fewer files.`,
      );
    }
    const hash = readHash(located.absolute);
    this.#originals.set(located.relative, hash);
    this.#originalTexts.set(
      located.relative,
      hash === null ? null : readNoFollow(located.absolute).toString('utf8'),
    );
  }
}

function normaliseDocsDir(docsDir: string): string {
  try {
    return normaliseInput(docsDir || '.');
  } catch (error) {
    throw new Error(`Invalid docsDir "${docsDir}": ${(error as Error).message}`);
  }
}
