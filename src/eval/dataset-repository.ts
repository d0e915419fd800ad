/**
 * A repository of a DogBench dataset folder, read without trusting it (SPEC §18): the folder is
 * someone else's, and a clone's own git configuration can run commands (checkout filters,
 * `core.fsmonitor`, hooks, textconv, external diffs) or contact a server (a partial clone's
 * promisor remote) the moment git reads it.
 *
 * So git never reads the clone's configuration: a clean bare repository of our own, made in the
 * evaluation's folder, borrows the clone's objects through `objects/info/alternates`, and every
 * question goes to it with object commands only (`cat-file`, `ls-tree`). It has no remote, so a
 * missing object is an error naming it instead of a fetch (this machine's git predates
 * `GIT_NO_LAZY_FETCH`). Files are written from blobs by us, byte for byte: no attribute, filter
 * or line-ending conversion applies. Symbolic links are refused, and so is any file over 64 MiB.
 */
import { lstat, mkdir, mkdtemp, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CatFileBatch } from '../git/cat-file.ts';
import { git } from '../git/git.ts';

/** The largest file a dataset may hand us (SPEC §18). */
export const MAX_DATASET_FILE_BYTES = 64 * 1024 * 1024;

/** A problem with the dataset's repository: the item is invalid, and the message says why. */
export class DatasetError extends Error {}

/** Where a clone keeps its objects, refusing symbolic links and linked worktrees on the way. */
async function objectsOf(clone: string): Promise<string> {
  const kind = async (file: string) => {
    const stats = await lstat(file).catch(() => null);
    if (stats?.isSymbolicLink())
      throw new DatasetError(`${file} is a symbolic link, which a dataset may not use`);
    return stats?.isDirectory() ? 'dir' : stats ? 'file' : null;
  };
  if ((await kind(clone)) !== 'dir') throw new DatasetError(`${clone} is not a directory`);
  const dotGit = path.join(clone, '.git');
  const found = await kind(dotGit);
  if (found === 'file')
    throw new DatasetError(
      `${dotGit} is a file (a linked worktree or submodule): use the clone it belongs to`,
    );
  const gitDir = found === 'dir' ? dotGit : clone;
  const objects = path.join(gitDir, 'objects');
  if ((await kind(objects)) !== 'dir')
    throw new DatasetError(`${clone} is not a git repository (no objects folder)`);
  return realpath(objects);
}

export class DatasetRepository {
  /** The clean repository that borrows the clone's objects. */
  readonly dir: string;
  readonly clone: string;

  private constructor(dir: string, clone: string) {
    this.dir = dir;
    this.clone = clone;
  }

  /** A reader of `clone`, its clean repository made under `scratch` (the evaluation's folder). */
  static async open(clone: string, scratch: string, signal?: AbortSignal): Promise<DatasetRepository> {
    const objects = await objectsOf(clone);
    await mkdir(scratch, { recursive: true });
    const dir = await mkdtemp(path.join(scratch, 'dataset-'));
    await git(['init', '--quiet', '--bare', dir], { signal });
    await writeFile(path.join(dir, 'objects', 'info', 'alternates'), `${objects}\n`);
    return new DatasetRepository(dir, clone);
  }

  /** Whether `commit` is a commit the clone has. */
  async hasCommit(commit: string, signal?: AbortSignal): Promise<boolean> {
    return git(['cat-file', '-e', `${commit}^{commit}`], { cwd: this.dir, signal }).then(
      () => true,
      () => false,
    );
  }

  /** The first line and the rest of a commit's message: a change's title and description. */
  async message(commit: string, signal?: AbortSignal): Promise<{ title: string; description: string }> {
    const text = await git(['cat-file', 'commit', commit], { cwd: this.dir, signal });
    const body = text.slice(text.indexOf('\n\n') + 2);
    const [title = '', ...rest] = body.split('\n');
    return { title: title.trim(), description: rest.join('\n').trim() };
  }

  /**
   * Writes the files of `commit` into `target` (which exists), `paths` of `from.commit` laid over
   * them (DogBench's code head: the base with the change's files).
   */
  async writeTree(
    commit: string,
    target: string,
    from: { commit: string; paths: string[] } | undefined,
    signal?: AbortSignal,
  ): Promise<void> {
    const entries = await this.#entries(commit, signal);
    if (from) {
      const changed = await this.#entries(from.commit, signal, from.paths);
      for (const file of from.paths) entries.delete(file);
      for (const [file, entry] of changed) entries.set(file, entry);
    }
    const reader = new CatFileBatch({ cwd: this.dir });
    try {
      for (const [file, { mode, oid }] of entries) {
        signal?.throwIfAborted();
        if (mode === '120000')
          throw new DatasetError(`${file} at ${commit} is a symbolic link, which a dataset may not use`);
        if (mode === '160000') continue; // A submodule: its files are another repository's.
        const info = await reader.info(oid);
        if (!info)
          throw new DatasetError(`object ${oid} (${file} at ${commit}) is missing from ${this.clone}`);
        if (info.size > MAX_DATASET_FILE_BYTES)
          throw new DatasetError(
            `${file} at ${commit} is ${info.size} bytes, over the 64 MiB a dataset file may be`,
          );
        const blob = await reader.contents(oid);
        const absolute = path.join(target, ...file.split('/'));
        await mkdir(path.dirname(absolute), { recursive: true });
        await writeFile(absolute, blob!.bytes, { mode: mode === '100755' ? 0o755 : 0o644 });
      }
    } finally {
      reader.close();
    }
  }

  /** The files of a commit (or of `paths` in it): path → mode and blob. */
  async #entries(commit: string, signal?: AbortSignal, paths?: string[]) {
    let listing: string;
    try {
      listing = await git(['ls-tree', '-r', '-z', '--full-tree', commit, '--', ...(paths ?? [])], {
        cwd: this.dir,
        signal,
      });
    } catch (error) {
      throw new DatasetError(
        `cannot read ${commit} in ${this.clone}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const entries = new Map<string, { mode: string; oid: string }>();
    for (const record of listing.split('\0')) {
      if (!record) continue;
      const tab = record.indexOf('\t');
      const [mode, , oid] = record.slice(0, tab).split(' ') as [string, string, string];
      const file = record.slice(tab + 1);
      if (file.split('/').some((s) => s === '..' || s === '.git' || s === ''))
        throw new DatasetError(`${commit} names a path no checkout may write: ${JSON.stringify(file)}`);
      entries.set(file, { mode, oid });
    }
    return entries;
  }
}
