/**
 * A context repository's code for one job (docs/code-context.mdx): its mirror in the cache (keyed by the
 * project and the repository's URL, beside the project's own), fetched at one commit — a
 * change's head — or at the tip of a ref, with trees only; blobs come when the agent reads them
 * (code-reader.ts). A second job fetches only the commits and trees that changed since.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { branchNameProblem } from '../ref-name.ts';
import { CatFileBatch } from './cat-file.ts';
import { classifyGitError, defaultRedact } from './checkout.ts';
import { GitCodeReader } from './code-reader.ts';
import { type GitOptions, git } from './git.ts';
import type { MirrorCache } from './mirror.ts';

export interface ContextRepositoryOptions {
  cache: MirrorCache;
  /** The project the repository is configured on (mirrors are per project). */
  project: string;
  /** Clone URL, without credentials. */
  remote: string;
  /** Credentials for git (gitCredentialEnv), if any. */
  env?: Record<string, string>;
  redact?: (text: string) => string;
  /** The commit to read (a change's head); wins over `ref`. */
  commit?: string;
  /** The branch or tag to read at its tip when there is no `commit` (default: the remote's HEAD). */
  ref?: string;
  signal?: AbortSignal;
}

export interface OpenedRepository {
  reader: GitCodeReader;
  /** The commit read. */
  commit: string;
  /** Stops the reader and lets the mirror go (evictable again). */
  close(): Promise<void>;
}

/** Where the fetched commit is kept in the mirror (under the mirror's lock, resolved at once). */
const FETCHED = 'refs/docwright/context-tip';

/** Largest changed file a later fetch brings along (larger ones come when they are read). */
const CHANGED_BLOB_LIMIT = '256k';

/** Whether an earlier job fetched into the mirror (its commit is a loose ref: the mirror is never packed). */
const fetchedBefore = (gitDir: string) =>
  stat(path.join(gitDir, FETCHED)).then(
    () => true,
    () => false,
  );

/** Fetches the repository's commit (or ref) into its mirror and opens a reader on it. */
export async function openContextRepository(options: ContextRepositoryOptions): Promise<OpenedRepository> {
  const { cache, project, remote, signal } = options;
  const redact = options.redact ?? defaultRedact(options.env);
  if (options.commit !== undefined && !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(options.commit)) {
    throw new Error(`the commit ${JSON.stringify(options.commit)} is not a full commit id`);
  }
  if (options.ref !== undefined && options.commit === undefined) {
    const problem = branchNameProblem(options.ref);
    if (problem)
      throw new Error(`the ref ${JSON.stringify(options.ref)} is not a valid ref name: it ${problem}`);
  }
  const lock = <T>(work: () => Promise<T>) => cache.use(project, remote, work, { signal });
  try {
    return await cache.use(
      project,
      remote,
      async (mirror) => {
        const opts: GitOptions = { cwd: mirror.gitDir, env: options.env, redact, signal };
        const objects = new CatFileBatch({ cwd: mirror.gitDir, env: options.env, redact });
        let commit: string;
        let release: () => Promise<void>;
        try {
          // Kept under a ref: the next job's fetch offers it as a commit the mirror has, and gets
          // only what changed since.
          const wanted = `+${options.commit ?? options.ref ?? 'HEAD'}:${FETCHED}`;
          const fetching = git(
            [
              'fetch',
              '--quiet',
              '--no-tags',
              '--no-write-fetch-head',
              // The first fetch takes no history and no file; a later one takes what changed since
              // the mirror's last commit (a shallow fetch would make the server walk the whole tree
              // again), with the changed files up to CHANGED_BLOB_LIMIT: what the job reads first.
              ...((await fetchedBefore(mirror.gitDir))
                ? [`--filter=blob:limit=${CHANGED_BLOB_LIMIT}`]
                : ['--depth', '1', '--filter=blob:none']),
              '--',
              'origin',
              wanted,
            ],
            opts,
          );
          // The reader's object process starts while the commit is fetched (after the fetch's, which
          // has the longer way to go): a process less to wait for at the first read.
          objects.start();
          await fetching;
          commit =
            options.commit ?? (await git(['rev-parse', '--verify', `${FETCHED}^{commit}`], opts)).trim();
          release = await cache.hold(mirror);
        } catch (error) {
          objects.close();
          throw error;
        }
        const reader = new GitCodeReader({
          cwd: mirror.gitDir,
          commit,
          env: options.env,
          redact,
          lock,
          signal,
          // A mirror made just now was fetched without any blob: the reader need not ask git which
          // blobs a folder lacks before its first read.
          blobless: mirror.created,
          objects,
        });
        return {
          reader,
          commit,
          close: async () => {
            reader.close();
            await release();
          },
        };
      },
      { signal },
    );
  } catch (error) {
    throw classifyGitError(error);
  }
}
