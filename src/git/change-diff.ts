/**
 * A change computed from a repository's own objects, between its base and head commits
 * (docs/code-context.mdx): the fallback when a host's listing stops short (GitHub lists 300 files
 * of a commit or comparison and 3,000 of a pull request; docwright keeps 300) or a file's diff
 * was left out or cut. Any file of a change can then be read, with its real size.
 *
 * It runs on a mirror (or a run's checkout) that is a partial clone: the listing compares trees
 * only (no blob is fetched, so no rename is found), and one file's diff fetches that file's two
 * blobs at most. Output is streamed and bounded: a 50 MB generated file costs time, not memory.
 */
import { type GitOptions, git } from './git.ts';

export type ChangedPathStatus = 'added' | 'modified' | 'removed';

export interface ChangedPath {
  path: string;
  status: ChangedPathStatus;
}

export interface ChangedPaths {
  /** At most the `max` asked for, in git's (byte) order. */
  files: ChangedPath[];
  /** How many paths changed in all. */
  total: number;
}

export interface PathDiff {
  path: string;
  status: ChangedPathStatus;
  binary: boolean;
  /** The file's size in bytes before and after the change (null: it did not exist). */
  oldSize: number | null;
  newSize: number | null;
  /** The diff from its first `@@`, at most `maxChars` characters cut at a line end ('' when none). */
  diff: string;
  /** Characters of the whole diff from its first `@@` (more than `diff.length` when it was cut). */
  chars: number;
}

/** Characters of one line held at most while a diff streams past. */
const LONG_LINE = 1 << 20;

const FULL_COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Runs work that fetches into a shared mirror under its lock (checkout.ts `FetchLock`). */
export type Locked = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * Makes sure the repository holds `commit` and its tree (a mirror fetched at the change's head
 * lacks its base): fetched from `origin` with no history and no file when missing.
 */
export async function ensureCommit(commit: string, options: GitOptions, lock: Locked): Promise<void> {
  if (!FULL_COMMIT.test(commit)) throw new Error(`${JSON.stringify(commit)} is not a full commit id`);
  const has = () =>
    git(['cat-file', '-e', `${commit}^{tree}`], options).then(
      () => true,
      () => false,
    );
  if (await has()) return;
  await lock(async () => {
    if (await has()) return;
    await git(
      [
        'fetch',
        '--quiet',
        '--no-tags',
        '--no-write-fetch-head',
        '--recurse-submodules=no',
        '--depth',
        '1',
        '--filter=blob:none',
        'origin',
        commit,
      ],
      options,
    );
  });
}

/** How far a shallow mirror is deepened, step by step, to find where a pull request branched off. */
const DEEPEN_STEPS = [64, 512];

/**
 * Where `head` branched off `base` (a pull request's base is its base branch's tip, which may
 * have moved on since: the change is what head adds since their merge base, as the hosts show
 * it). A mirror fetched one commit deep is deepened a step at a time; `base` when none is found.
 */
export async function mergeBaseOf(
  base: string,
  head: string,
  options: GitOptions,
  lock: Locked,
): Promise<string> {
  const find = () =>
    git(['merge-base', base, head], options).then(
      (out) => out.trim() || null,
      () => null,
    );
  let found = await find();
  for (const deepen of DEEPEN_STEPS) {
    if (found !== null) return found;
    const shallow = (await git(['rev-parse', '--is-shallow-repository'], options)).trim() === 'true';
    if (!shallow) break;
    await lock(() =>
      git(
        [
          'fetch',
          '--quiet',
          '--no-tags',
          '--no-write-fetch-head',
          '--recurse-submodules=no',
          '--filter=blob:none',
          `--deepen=${deepen}`,
          'origin',
          base,
          head,
        ],
        options,
      ),
    );
    found = await find();
  }
  return found ?? base;
}

const STATUS: Record<string, ChangedPathStatus> = { A: 'added', D: 'removed' };

/** The paths changed from `base` to `head` (trees only: no rename detection), at most `max`. */
export async function changedPaths(
  base: string,
  head: string,
  max: number,
  options: GitOptions,
): Promise<ChangedPaths> {
  const files: ChangedPath[] = [];
  let total = 0;
  let pending = '';
  let status: string | null = null;
  const take = (field: string) => {
    // `--raw -z`: ":<modes> <oids> <status>\0<path>\0" for each path.
    if (status === null) {
      status = field.slice(field.lastIndexOf(' ') + 1);
      return;
    }
    total++;
    if (files.length < max) files.push({ path: field, status: STATUS[status[0]!] ?? 'modified' });
    status = null;
  };
  await git(['diff', '--raw', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', base, head, '--'], {
    ...options,
    onStdout: (text) => {
      pending += text;
      let end = pending.indexOf('\0');
      while (end >= 0) {
        take(pending.slice(0, end));
        pending = pending.slice(end + 1);
        end = pending.indexOf('\0');
      }
      return undefined;
    },
  });
  return { files, total };
}

/** The size of `path` at `commit`, or null when it is not a file there. */
async function sizeAt(commit: string, path: string, options: GitOptions): Promise<number | null> {
  const out = await git(['ls-tree', '-l', '-z', '--full-tree', commit, '--', path], options);
  // "<mode> blob <oid> <size>\t<path>\0"
  const match = /^\d+ blob [0-9a-f]+ +(\d+)\t/.exec(out);
  return match ? Number(match[1]) : null;
}

/**
 * One file's change from `base` to `head`, its diff bounded to `maxChars` (real size in `chars`);
 * null when the change leaves the path as it was (or it is a file at neither).
 */
export async function pathDiff(
  base: string,
  head: string,
  path: string,
  maxChars: number,
  options: GitOptions,
): Promise<PathDiff | null> {
  const [oldSize, newSize] = await Promise.all([sizeAt(base, path, options), sizeAt(head, path, options)]);
  if (oldSize === null && newSize === null) return null;
  let pending = '';
  let inHunks = false;
  let binary = false;
  let diff = '';
  let chars = 0;
  let full = false;
  let printed = false;
  const line = (text: string) => {
    printed = true;
    if (!inHunks) {
      if (text.startsWith('Binary files ') || text === 'GIT binary patch') binary = true;
      if (!text.startsWith('@@')) return;
      inHunks = true;
    }
    chars += text.length + 1;
    if (!full && diff.length + text.length + 1 <= maxChars) diff += `${text}\n`;
    else full = true;
  };
  await git(
    [
      '-c',
      'core.quotePath=false',
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      base,
      head,
      '--',
      path,
    ],
    {
      ...options,
      onStdout: (text) => {
        pending += text;
        let end = pending.indexOf('\n');
        while (end >= 0) {
          line(pending.slice(0, end));
          pending = pending.slice(end + 1);
          end = pending.indexOf('\n');
        }
        // A line of megabytes (minified code) is counted, not held: it is never shown whole.
        if (pending.length > LONG_LINE && inHunks) {
          chars += pending.length;
          full = true;
          pending = '';
        }
        return undefined;
      },
    },
  );
  if (pending !== '') line(pending);
  // Git prints nothing for a path the change leaves as it was.
  if (!printed) return null;
  const status: ChangedPathStatus = oldSize === null ? 'added' : newSize === null ? 'removed' : 'modified';
  return { path, status, binary, oldSize, newSize, diff, chars };
}
