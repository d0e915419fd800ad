/**
 * The mirror cache: one bare, shallow, partial (`--filter=blob:none`) repository per project and
 * repository URL — the project's own, from which each run makes its working checkout with
 * `git worktree add`, and each of its context repositories, whose code the agent reads straight
 * from the objects (context-repository.ts, code-reader.ts). A run fetches only its ref
 * into the mirror, and only the blobs it checks out, so the second job on a project costs what
 * changed since the first, not the repository.
 *
 * - Concurrency: every change to a mirror (creating it, fetching into it, adding a worktree,
 *   evicting it) holds the mirror's lock, a lock directory shared by every process on the
 *   machine (proper-lockfile: refreshed while held, taken over when its holder died).
 * - Self-healing: a mirror is usable once its marker file exists (written last when it is made),
 *   so a half-made one is rebuilt; a checkout that fails for any reason but the remote's (see
 *   checkout.ts) rebuilds the mirror and tries once more, then falls back to a plain clone.
 * - Bounded: after runs, idle mirrors are removed, least recently used first, while all of them
 *   together take more than the configured size. A mirror with a live worktree is never removed.
 * - No credentials on disk: the mirror's configuration holds the remote's URL (which never
 *   carries credentials, see credentials.ts); the credentials reach git through the environment
 *   of each command, as for every other git command.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { git } from './git.ts';

export interface MirrorCacheOptions {
  /** Folder holding the mirrors (`DOCWRIGHT_MIRROR_DIR`, default `<data dir>/mirrors`). */
  dir: string;
  /** Size all idle mirrors together may take before the least recently used are removed (`DOCWRIGHT_MIRROR_MAX_MB`). */
  maxBytes: number;
  /** Longest a run waits for another process's hold on a mirror (default 15 minutes). */
  lockTimeoutMs?: number;
}

/** One mirror, locked by the caller for as long as it uses it. */
export interface Mirror {
  /** The bare repository. */
  gitDir: string;
  /** Made by this `use` (empty until `work` fetches into it). */
  created: boolean;
}

/** Written last when a mirror is made: a mirror without it is half-made. */
const MARKER = 'docwright-mirror.json';
/** A lock not refreshed for this long belongs to a process that died. */
const LOCK_STALE_MS = 20_000;
const DEFAULT_LOCK_TIMEOUT_MS = 15 * 60_000;
/** How long deleting a project waits for a run to let go of its mirror. */
const DISCARD_WAIT_MS = 10_000;

/** A value in git's configuration syntax (a URL may hold `#` or `;`, which start comments). */
const configValue = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/**
 * The configuration of a mirror, written in one go (eleven `git config` processes cost a
 * quarter of a second here): a partial clone of `origin` — blobs a checkout lacks are fetched
 * when needed — whose linked worktrees have settings of their own.
 */
const mirrorConfig = (remote: string) => `[core]
\trepositoryformatversion = 1
\tfilemode = true
\tlogallrefupdates = false
[remote "origin"]
\turl = ${configValue(remote)}
\tpromisor = true
[extensions]
\tpartialClone = origin
\tworktreeConfig = true
[gc]
\tauto = 0
[maintenance]
\tauto = false
`;

// With worktree configuration on, `core.bare` belongs to the main worktree's own file: in the
// shared one it would make every linked worktree bare too. Each worktree's sparse-checkout
// settings go to its own file as well, so concurrent runs never write a shared one; no automatic
// gc or maintenance runs while another process may be using the mirror.
const MAIN_WORKTREE_CONFIG = '[core]\n\tbare = true\n';

export class MirrorCache {
  readonly dir: string;
  readonly maxBytes: number;
  readonly #lockTimeoutMs: number;

  constructor(options: MirrorCacheOptions) {
    this.dir = options.dir;
    this.maxBytes = options.maxBytes;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  }

  /** The mirror's folder for a project's repository: a new repository URL gets a new mirror. */
  pathOf(project: string, remote: string): string {
    const digest = createHash('sha256').update(remote).digest('hex').slice(0, 16);
    return path.join(this.dir, `${mirrorPrefix(project)}${digest}.git`);
  }

  /**
   * Runs `work` on the project's mirror while holding its lock; makes the mirror first when it
   * is missing or half-made, or anew when `rebuild` is set — unless another run still works in
   * it (its worktree would lose its objects): then this fails, and the caller clones instead.
   * The mirror's last use (for eviction) is recorded when `work` succeeds.
   */
  async use<T>(
    project: string,
    remote: string,
    work: (mirror: Mirror) => Promise<T>,
    options: { rebuild?: boolean; signal?: AbortSignal } = {},
  ): Promise<T> {
    const gitDir = this.pathOf(project, remote);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const release = await this.#lock(gitDir, options.signal);
    try {
      const marker = path.join(gitDir, MARKER);
      const created = options.rebuild || !(await exists(marker));
      if (created) {
        if ((await exists(gitDir)) && (await hasLiveWorktree(gitDir))) {
          throw new Error(`the mirror ${gitDir} needs rebuilding but another run uses it`);
        }
        await createMirror(gitDir, remote, options.signal);
      }
      const result = await work({ gitDir, created });
      const now = new Date();
      await utimes(marker, now, now);
      return result;
    } finally {
      await release();
    }
  }

  /**
   * Marks the mirror as used by a code reader until the returned function is called (or this
   * process ends): eviction and `discardProject` leave it alone meanwhile, as they do a mirror
   * with a live worktree. Call it inside `use` (the mirror must exist).
   */
  async hold(mirror: Mirror): Promise<() => Promise<void>> {
    const dir = path.join(mirror.gitDir, HOLDS);
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `${process.pid}-${++holdCount}`);
    await writeFile(file, '');
    return () => rm(file, { force: true });
  }

  /**
   * Removes idle mirrors, least recently used first, until all of them take at most `maxBytes`.
   * Skips mirrors another process holds and mirrors with a live worktree (a run using them).
   * Returns the folders removed.
   */
  async evict(): Promise<string[]> {
    const mirrors = await this.#list();
    let total = mirrors.reduce((sum, m) => sum + m.bytes, 0);
    const removed: string[] = [];
    for (const mirror of mirrors.sort((a, b) => a.lastUsed - b.lastUsed)) {
      if (total <= this.maxBytes) break;
      let release: (() => Promise<void>) | undefined;
      try {
        release = await lockfile.lock(mirror.gitDir, lockOptions(0));
      } catch {
        continue; // in use by another process right now
      }
      try {
        if (await hasLiveWorktree(mirror.gitDir)) continue;
        await discard(mirror.gitDir);
        total -= mirror.bytes;
        removed.push(mirror.gitDir);
      } finally {
        await release().catch(() => {});
      }
    }
    return removed;
  }

  /**
   * Removes the mirrors of a project (every repository URL it had), waiting a little for a run
   * that holds one to let go. A mirror a run still works in is left for `evict`. Returns the
   * folders removed.
   */
  async discardProject(project: string): Promise<string[]> {
    const prefix = mirrorPrefix(project);
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const removed: string[] = [];
    for (const name of names.filter((n) => n.startsWith(prefix) && n.endsWith('.git'))) {
      const gitDir = path.join(this.dir, name);
      let release: (() => Promise<void>) | undefined;
      try {
        release = await this.#lock(gitDir, AbortSignal.timeout(DISCARD_WAIT_MS));
      } catch {
        continue; // still held: a cancelled run winding down, or another process's fetch
      }
      try {
        if (await hasLiveWorktree(gitDir)) continue;
        await discard(gitDir);
        removed.push(gitDir);
      } finally {
        await release().catch(() => {});
      }
    }
    return removed;
  }

  /** The mirrors in the cache folder with their size and last use (half-made ones count as used long ago). */
  async #list(): Promise<{ gitDir: string; bytes: number; lastUsed: number }[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const mirrors = [];
    for (const name of names.filter((n) => n.endsWith('.git'))) {
      const gitDir = path.join(this.dir, name);
      const marker = await stat(path.join(gitDir, MARKER)).catch(() => undefined);
      mirrors.push({ gitDir, bytes: await folderBytes(gitDir), lastUsed: marker?.mtimeMs ?? 0 });
    }
    return mirrors;
  }

  /** Takes the mirror's lock, waiting (asynchronously) while another run or process holds it. */
  async #lock(gitDir: string, signal: AbortSignal | undefined): Promise<() => Promise<void>> {
    const deadline = Date.now() + this.#lockTimeoutMs;
    for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
      signal?.throwIfAborted();
      try {
        return await lockfile.lock(gitDir, lockOptions(0));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED' || Date.now() > deadline) throw error;
      }
      await sleep(wait * (0.5 + Math.random() / 2), undefined, { signal });
    }
  }
}

/** The start of the folder name of each of a project's mirrors (project ids hold no `-`). */
const mirrorPrefix = (project: string) => `${project.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)}-`;

const lockOptions = (retries: number) => ({
  // The lock directory sits beside the mirror (`<mirror>.lock`), so it outlives a rebuild.
  realpath: false,
  stale: LOCK_STALE_MS,
  update: LOCK_STALE_MS / 4,
  retries,
  // Another process took the lock over (ours was not refreshed in time): nothing to undo here;
  // git's own locks keep the mirror consistent, and the default would throw from a timer.
  onCompromised: () => {},
});

/**
 * Makes an empty mirror of `remote` at `gitDir`, replacing whatever is there. The bare
 * repository's few files are written here rather than by `git init`: what git needs to take a
 * folder for a repository is `HEAD`, `objects/` and `refs/` (sample hooks, `description` and
 * `info/exclude` serve no mirror), and a process less is a good part of a cold job's own cost.
 */
async function createMirror(gitDir: string, remote: string, signal?: AbortSignal): Promise<void> {
  await discard(gitDir);
  signal?.throwIfAborted();
  await Promise.all(
    ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags'].map((dir) =>
      mkdir(path.join(gitDir, dir), { recursive: true }),
    ),
  );
  await Promise.all([
    // A mirror has no branch of its own: HEAD only has to be a valid symbolic ref.
    writeFile(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n'),
    writeFile(path.join(gitDir, 'config'), mirrorConfig(remote)),
    writeFile(path.join(gitDir, 'config.worktree'), MAIN_WORKTREE_CONFIG),
  ]);
  await writeFile(path.join(gitDir, MARKER), `${JSON.stringify({ createdAt: new Date().toISOString() })}\n`);
}

/** Removes a mirror: renamed away first, so that no one ever sees a half-removed one as a mirror. */
async function discard(gitDir: string): Promise<void> {
  const trash = `${gitDir}.removing-${process.pid}-${Date.now()}`;
  try {
    await rename(gitDir, trash);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  await rm(trash, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * Whether a run still uses the mirror: a linked worktree whose folder exists, or a code reader
 * of a live process (see `MirrorCache.hold`). Entries of folders that are gone (a run killed
 * before it could remove its worktree) are pruned, and holds of processes that are gone ignored.
 */
async function hasLiveWorktree(gitDir: string): Promise<boolean> {
  await git(['worktree', 'prune'], { cwd: gitDir }).catch(() => {});
  const entries = await readdir(path.join(gitDir, 'worktrees')).catch(() => []);
  if (entries.length > 0) return true;
  const holds = await readdir(path.join(gitDir, HOLDS)).catch(() => [] as string[]);
  return holds.some((name) => processAlive(Number(name.split('-')[0])));
}

/** Folder of a mirror holding one empty file per code reader using it: `<pid>-<n>`. */
const HOLDS = 'docwright-readers';
let holdCount = 0;

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Bytes of the files under `dir` (a mirror is a few packs and small files). */
async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const info = await stat(path.join(entry.parentPath, entry.name)).catch(() => undefined);
    total += info?.size ?? 0;
  }
  return total;
}

/** The marker's content, for tests that check a mirror was made anew. */
export async function mirrorCreatedAt(gitDir: string): Promise<string | undefined> {
  const text = await readFile(path.join(gitDir, MARKER), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as { createdAt: string }).createdAt;
}
