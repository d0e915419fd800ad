/**
 * Reads a repository's code at one commit straight from its git objects (docs/code-context.mdx): a mirror of
 * the cache (mirror.ts) or a run's checkout, without touching any worktree — a sparse docs
 * checkout stays sparse. Trees are in the partial clone already; blobs are fetched on demand
 * from the promisor remote, a file at a time for a read and in batches for a search, so a job
 * pays for what it reads, and the next job on the same mirror for nothing it read before.
 *
 * Everything is bounded and streamed: listings stop after `max` paths, a read looks at an
 * object's size before its bytes, and a search holds one file at a time and stops at its limits.
 * Credentials reach git through `env` only, as for every other git command.
 */
import { CatFileBatch } from './cat-file.ts';
import {
  type ChangedPaths,
  changedPaths,
  ensureCommit,
  mergeBaseOf,
  type PathDiff,
  pathDiff,
} from './change-diff.ts';
import { type FetchLock, unlocked } from './checkout.ts';
import { type GitOptions, git } from './git.ts';

export interface GitCodeReaderOptions {
  /** The repository: a bare mirror, or a checkout's folder. */
  cwd: string;
  /** The commit to read (a full id). */
  commit: string;
  /** Credentials for the promisor remote (gitCredentialEnv), if any. */
  env?: Record<string, string>;
  redact?: (text: string) => string;
  /**
   * The repository held no file's blob when the reader was made (a mirror just created and
   * fetched with trees only): until the reader fetches otherwise than by reading ahead, a
   * folder's read-ahead fetches without asking git first which blobs are missing. (Blobs another
   * reader of the mirror fetched meanwhile come again: bytes, not a round trip.)
   */
  blobless?: boolean;
  /** Held while blobs are fetched into a shared mirror (see checkout.ts `FetchLock`). */
  lock?: FetchLock;
  /**
   * The object reader to use (on `cwd`, with the same credentials), e.g. one started while the
   * commit was being fetched; the reader closes it. Default: one of its own.
   */
  objects?: CatFileBatch;
  /** Ends every git command the reader runs. */
  signal?: AbortSignal;
}

/** A path of the tree, or why it cannot be read. */
export type CodeReadOutcome =
  | { kind: 'file'; bytes: Buffer }
  | { kind: 'directory' }
  | { kind: 'missing' }
  | { kind: 'too-large'; size: number };

export interface CodeListOptions {
  /** Paths collected at most (the rest are only counted). */
  max: number;
  /** Keeps a path when it answers true (a glob, a folder to leave out). */
  filter?: (path: string) => boolean;
}

export interface CodeListing {
  /** Repository-relative paths of the files under the folder, in git's (byte) order. */
  files: string[];
  /** Files that passed the filter, collected or not. */
  total: number;
  /** Whether the folder exists at the commit (a file counts, and lists itself). */
  exists: boolean;
}

export interface CodeScanOptions {
  filter?: (path: string) => boolean;
  /** Files looked at, at most. */
  maxFiles: number;
  /** Bytes of file content read, at most. */
  maxBytes: number;
  /** Largest file read; larger ones are counted and skipped. */
  maxFileBytes: number;
  /** When to stop (epoch ms). */
  deadline?: number;
  /** Blobs fetched per round trip when they are missing (default 200). */
  batch?: number;
}

export interface CodeScanResult {
  /** Files whose content was handed over. */
  scanned: number;
  skippedTooLarge: number;
  /** Why the scan ended before the last file: the limit that stopped it, and the next file. */
  stopped: { reason: 'files' | 'bytes' | 'deadline' | 'caller'; at: string } | null;
}

const DEFAULT_BATCH = 200;
/** Missing files of a folder fetched with one that is read, at most. */
const READ_AHEAD = 100;
/** Folders remembered as read ahead, at most (a bound on the reader's memory). */
const READ_AHEAD_FOLDERS = 10_000;
/** Largest folder tree (bytes) a read-ahead holds whole; a larger one is streamed from ls-tree. */
const TREE_READ_WHOLE = 1 << 20;
/** Missing objects of a folder a read-ahead keeps in mind, at most (a bound on its memory). */
const MISSING_IN_FOLDER = 10_000;
/** Names of files that are most likely binary (and often large): never read ahead. */
const BINARY_NAME =
  /\.(png|jpe?g|gif|webp|ico|bmp|tiff?|psd|pdf|zip|gz|tgz|bz2|xz|7z|rar|jar|war|class|so|dylib|dll|exe|bin|o|a|wasm|woff2?|ttf|otf|eot|mp[34]|mov|avi|webm|ogg|wav|flac|sqlite|db|pack|idx)$/i;

/** A tree entry: its type, object id and path. */
interface Entry {
  type: string;
  oid: string;
  path: string;
}

/** A file read and the files beside it that a read-ahead fetches with it. */
interface FolderFiles {
  /** The read file's blob, when the folder holds it. */
  target?: string;
  siblings: string[];
}

/** Collects a FolderFiles from a folder's entries: the file `name`, and up to READ_AHEAD others that are not likely binary. */
function pickFiles(name: string) {
  const picked: FolderFiles = { siblings: [] };
  return {
    picked,
    take(entry: string, oid: string, blob: boolean) {
      if (!blob) return;
      if (entry === name) picked.target = oid;
      else if (picked.siblings.length < READ_AHEAD && !BINARY_NAME.test(entry)) picked.siblings.push(oid);
    },
  };
}

/** Whether a tree entry's mode is a file's (a regular file or a symbolic link), as `git ls-tree` says `blob`. */
const isBlobMode = (mode: number) => (mode & 0o170000) !== 0o040000 && (mode & 0o170000) !== 0o160000;

/** What a code context reads from: a GitCodeReader, or one that opens its repository when first read. */
export type CodeSource = Pick<GitCodeReader, 'list' | 'read' | 'scan' | 'changedPaths' | 'pathDiff'>;

export class GitCodeReader {
  readonly commit: string;
  readonly #options: GitCodeReaderOptions;
  readonly #objects: CatFileBatch;
  /** Folders whose missing files a read fetched, or is fetching (see `#readAhead`). */
  readonly #readAheads = new Map<string, Promise<void>>();
  /** Merge bases of the changes read (change-diff.ts), by `base..head`. */
  readonly #mergeBases = new Map<string, Promise<string>>();
  /** Whether every blob the repository holds was fetched by a read-ahead of this reader (see `blobless`). */
  #blobless: boolean;

  constructor(options: GitCodeReaderOptions) {
    this.commit = options.commit;
    this.#options = options;
    this.#blobless = options.blobless ?? false;
    this.#objects =
      options.objects ?? new CatFileBatch({ cwd: options.cwd, env: options.env, redact: options.redact });
  }

  /** Stops the reader's git process. */
  close(): void {
    this.#objects.close();
  }

  /** The files under `dir` ('.' for the root), recursively. */
  async list(dir: string, options: CodeListOptions): Promise<CodeListing> {
    const files: string[] = [];
    let total = 0;
    let exists = dir === '.';
    await this.#entries(dir, (entry) => {
      exists = true;
      if (entry.type !== 'blob') return;
      if (options.filter && !options.filter(entry.path)) return;
      total++;
      if (files.length < options.max) files.push(entry.path);
    });
    return { files, total, exists };
  }

  /**
   * One file's bytes, when it is a file of at most `maxBytes`. A blob the mirror lacks is fetched
   * with the other missing files of its folder (read-ahead, see `#readAhead`): reading a file's
   * neighbours, as one does in code, then costs no further round trip.
   */
  async read(path: string, maxBytes: number): Promise<CodeReadOutcome> {
    if (path === '.') return { kind: 'directory' };
    await this.#readAhead(path);
    const info = await this.#objects.info(`${this.commit}:${path}`);
    if (!info) return { kind: 'missing' };
    if (info.type === 'tree') return { kind: 'directory' };
    if (info.type !== 'blob') return { kind: 'missing' };
    if (info.size > maxBytes) return { kind: 'too-large', size: info.size };
    const object = await this.#objects.contents(info.oid);
    return object ? { kind: 'file', bytes: object.bytes } : { kind: 'missing' };
  }

  /**
   * Hands each file under `dir` to `onFile`, in git's order, one at a time; `onFile` answering
   * false stops the scan. Missing blobs are fetched in batches just before they are read, so a
   * scan stopped by its limits fetches little more than it read.
   */
  async scan(
    dir: string,
    options: CodeScanOptions,
    onFile: (path: string, bytes: Buffer) => boolean | undefined,
  ): Promise<CodeScanResult> {
    const candidates: Entry[] = [];
    let more: string | undefined;
    await this.#entries(dir, (entry) => {
      if (entry.type !== 'blob') return;
      if (options.filter && !options.filter(entry.path)) return;
      if (candidates.length < options.maxFiles) candidates.push(entry);
      else more ??= entry.path;
    });
    this.#blobless = false; // the scan fetches files of any folder
    const missing = await this.#missing(dir, new Set(candidates.map((c) => c.oid)));
    const result: CodeScanResult = { scanned: 0, skippedTooLarge: 0, stopped: null };
    let bytesLeft = options.maxBytes;
    const batch = options.batch ?? DEFAULT_BATCH;
    for (let start = 0; start < candidates.length; start += batch) {
      const slice = candidates.slice(start, start + batch);
      const stop = (reason: NonNullable<CodeScanResult['stopped']>['reason'], at: string) => {
        result.stopped = { reason, at };
        return result;
      };
      if (options.deadline !== undefined && Date.now() > options.deadline)
        return stop('deadline', slice[0]!.path);
      await this.#fetch(slice.map((c) => c.oid).filter((oid) => missing.has(oid)));
      for (const entry of slice) {
        if (options.deadline !== undefined && Date.now() > options.deadline)
          return stop('deadline', entry.path);
        if (bytesLeft <= 0) return stop('bytes', entry.path);
        const info = await this.#objects.info(entry.oid);
        if (!info) continue;
        if (info.size > options.maxFileBytes) {
          result.skippedTooLarge++;
          continue;
        }
        const object = await this.#objects.contents(entry.oid);
        if (!object) continue;
        bytesLeft -= object.bytes.length;
        result.scanned++;
        if (onFile(entry.path, object.bytes) === false) return stop('caller', entry.path);
      }
    }
    if (more !== undefined) result.stopped = { reason: 'files', at: more };
    return result;
  }

  /**
   * When `path`'s blob is missing, fetches it and up to READ_AHEAD missing files beside it (not
   * ones whose names say they are binary) in one round trip. Sizes are unknown before a fetch:
   * the read-ahead is bounded by count, and its blobs go to disk, never to memory. Reads of the
   * same folder meanwhile wait for it rather than have git fetch their file on its own.
   */
  #readAhead(path: string): Promise<void> {
    const slash = path.lastIndexOf('/');
    const dir = slash === -1 ? '.' : path.slice(0, slash);
    // A folder read ahead once has its files (a file past READ_AHEAD is fetched on its own by git).
    const done = this.#readAheads.get(dir);
    if (done) return done;
    if (this.#readAheads.size >= READ_AHEAD_FOLDERS) {
      this.#readAheads.clear();
      this.#blobless = false; // a folder forgotten here may be read ahead again
    }
    // One that failed (the remote unreachable for a moment) is tried again by the next read.
    const fetching: Promise<void> = this.#fetchFolder(dir, path.slice(slash + 1)).catch((error: unknown) => {
      if (this.#readAheads.get(dir) === fetching) this.#readAheads.delete(dir);
      throw error;
    });
    this.#readAheads.set(dir, fetching);
    return fetching;
  }

  async #fetchFolder(dir: string, name: string): Promise<void> {
    if (this.#blobless) {
      // Nothing of this folder was fetched (see `blobless`): its files are missing, all of them.
      const files = await this.#folderFiles(dir, name);
      if (files?.target !== undefined) await this.#fetch([files.target, ...files.siblings]);
      return;
    }
    // What the folder holds (from the object reader, which the read needs anyway) and which of
    // its objects the repository lacks (rev-list) are asked side by side: a cold read's own cost
    // before its round trip is one new process, not three in a row.
    const [files, lacking] = await Promise.all([
      this.#folderFiles(dir, name),
      this.#missingInFolder(dir).catch(() => undefined),
    ]);
    if (files?.target === undefined) return; // not a file of a folder at this commit: the read says what it is
    const wanted = [files.target, ...files.siblings];
    const missing = lacking ?? (await this.#missing(dir, new Set(wanted), 1));
    if (!missing.has(files.target)) return;
    await this.#fetch(wanted.filter((oid) => missing.has(oid)));
  }

  /**
   * The blob of `name` in the folder `dir` and up to READ_AHEAD other files there (not ones whose
   * names say they are binary), or undefined when `dir` is no folder at the commit. The folder's
   * tree comes from the object reader (no process of its own) unless it is too large to hold.
   */
  async #folderFiles(dir: string, name: string): Promise<FolderFiles | undefined> {
    const info = await this.#objects.info(dir === '.' ? `${this.commit}^{tree}` : `${this.commit}:${dir}`);
    if (info?.type !== 'tree') return undefined;
    if (info.size > TREE_READ_WHOLE) return this.#folderFilesListed(dir, name);
    const tree = await this.#objects.contents(info.oid);
    if (!tree) return undefined;
    const files = pickFiles(name);
    // `<octal mode> SP <name> NUL <binary object id>`, entry after entry.
    const idLength = this.commit.length / 2;
    for (let at = 0; at < tree.bytes.length; ) {
      const space = tree.bytes.indexOf(0x20, at);
      const nul = tree.bytes.indexOf(0, space);
      if (space === -1 || nul === -1) break;
      const mode = Number.parseInt(tree.bytes.toString('latin1', at, space), 8);
      const oid = tree.bytes.toString('hex', nul + 1, nul + 1 + idLength);
      files.take(tree.bytes.toString('utf8', space + 1, nul), oid, isBlobMode(mode));
      at = nul + 1 + idLength;
    }
    return files.picked;
  }

  /** `#folderFiles` of a large folder, streamed from `git ls-tree`. */
  async #folderFilesListed(dir: string, name: string): Promise<FolderFiles | undefined> {
    const files = pickFiles(name);
    let rest = '';
    try {
      await git(['ls-tree', '-z', dir === '.' ? this.commit : `${this.commit}:${dir}`], {
        ...this.#gitOptions(),
        onStdout: (text) => {
          const records = (rest + text).split('\0');
          rest = records.pop() ?? '';
          for (const record of records) {
            const tab = record.indexOf('\t');
            if (tab === -1) continue;
            const [, type = '', oid = ''] = record.slice(0, tab).split(' ');
            files.take(record.slice(tab + 1), oid, type === 'blob');
          }
          return undefined;
        },
      });
    } catch {
      return undefined;
    }
    return files.picked;
  }

  /**
   * The objects directly in the folder `dir` that the repository lacks, or undefined when there
   * are more than MISSING_IN_FOLDER (a bound on memory: the caller then asks about its few).
   */
  async #missingInFolder(dir: string): Promise<Set<string> | undefined> {
    const missing = new Set<string>();
    let tooMany = false;
    await this.#revListMissing(dir, 1, (oid) => {
      if (missing.size < MISSING_IN_FOLDER) missing.add(oid);
      else tooMany = true;
    });
    return tooMany ? undefined : missing;
  }

  /** Streams `git ls-tree -r` of `dir` at the commit, entry by entry. */
  async #entries(dir: string, onEntry: (entry: Entry) => void): Promise<void> {
    let rest = '';
    const take = (record: string) => {
      // `<mode> SP <type> SP <oid> TAB <path>`
      const tab = record.indexOf('\t');
      if (tab === -1) return;
      const [, type = '', oid = ''] = record.slice(0, tab).split(' ');
      onEntry({ type, oid, path: record.slice(tab + 1) });
    };
    await git(
      [
        '--literal-pathspecs',
        'ls-tree',
        '-r',
        '-z',
        '--full-tree',
        this.commit,
        '--',
        ...(dir === '.' ? [] : [dir]),
      ],
      {
        ...this.#gitOptions(),
        onStdout: (text) => {
          const records = (rest + text).split('\0');
          rest = records.pop() ?? '';
          for (const record of records) take(record);
          return undefined;
        },
      },
    );
    if (rest) take(rest);
  }

  /**
   * Which of `wanted` the repository lacks, listed without fetching anything; `depth` 1 looks at
   * the folder's own files only, not into its subfolders.
   */
  async #missing(dir: string, wanted: Set<string>, depth?: number): Promise<Set<string>> {
    const missing = new Set<string>();
    if (wanted.size === 0) return missing;
    await this.#revListMissing(dir, depth, (oid) => {
      if (wanted.has(oid)) missing.add(oid);
    }).catch(() => {
      // A single file's path is no tree: its one blob is treated as missing.
      for (const oid of wanted) missing.add(oid);
    });
    return missing;
  }

  /** Hands each object under `dir` at the commit that the repository lacks to `onMissing`. */
  async #revListMissing(
    dir: string,
    depth: number | undefined,
    onMissing: (oid: string) => void,
  ): Promise<void> {
    let rest = '';
    const take = (line: string) => {
      if (line.startsWith('?')) onMissing(line.slice(1));
    };
    const tree = dir === '.' ? `${this.commit}^{tree}` : `${this.commit}:${dir}`;
    const filter = depth === undefined ? [] : [`--filter=tree:${depth}`];
    await git(['rev-list', '--objects', '--missing=print', ...filter, tree], {
      ...this.#gitOptions(),
      onStdout: (text) => {
        const lines = (rest + text).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) take(line);
        return undefined;
      },
    });
    if (rest) take(rest);
  }

  /** Fetches the blobs in one round trip, the way git's own lazy fetch asks for them. */
  async #fetch(oids: string[]): Promise<void> {
    if (oids.length === 0) return;
    const lock = this.#options.lock ?? unlocked;
    await lock(() =>
      git(
        [
          '-c',
          'fetch.negotiationAlgorithm=noop',
          'fetch',
          '--quiet',
          '--no-tags',
          '--no-write-fetch-head',
          '--recurse-submodules=no',
          '--filter=blob:none',
          '--stdin',
          'origin',
        ],
        { ...this.#gitOptions(), input: `${oids.join('\n')}\n` },
      ),
    );
  }

  /** The paths `head` changed since it branched off `base` (change-diff.ts). */
  async changedPaths(base: string, head: string, max: number): Promise<ChangedPaths> {
    return changedPaths(await this.#mergeBase(base, head), head, max, this.#gitOptions());
  }

  /** One path's change since `head` branched off `base` (change-diff.ts), bounded to `maxChars`. */
  async pathDiff(base: string, head: string, path: string, maxChars: number): Promise<PathDiff | null> {
    return pathDiff(await this.#mergeBase(base, head), head, path, maxChars, this.#gitOptions());
  }

  /** The merge base of a change's base and head, both fetched when missing; found once per pair. */
  #mergeBase(base: string, head: string): Promise<string> {
    const key = `${base}..${head}`;
    let found = this.#mergeBases.get(key);
    if (!found) {
      const lock = this.#options.lock ?? unlocked;
      found = (async () => {
        for (const commit of [base, head]) await ensureCommit(commit, this.#gitOptions(), lock);
        return mergeBaseOf(base, head, this.#gitOptions(), lock);
      })();
      // A failure is not remembered: the next read tries again.
      found.catch(() => this.#mergeBases.delete(key));
      if (this.#mergeBases.size < 100) this.#mergeBases.set(key, found);
    }
    return found;
  }

  #gitOptions(): GitOptions {
    const { cwd, env, redact, signal } = this.#options;
    return { cwd, env, redact, signal };
  }
}
