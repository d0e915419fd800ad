/**
 * The code a run reads (docs/code-context.mdx): the project's own repository outside `docsDir`, from the run's
 * checkout's objects at its base commit (the checkout stays sparse), and each context repository
 * from its mirror, at the head of the job's change of it or else at its ref.
 *
 * The seam for jobs that document changes: `RunCodeContext` is what the worker passes in per run
 * (`createPipeline(app, { codeContext })`); everything from there — fetching into the mirrors,
 * serving the agent's reads, closing — is here.
 */
import type { AgentChange } from '../agent/change.ts';
import { type CodeDescription, type CodeReader, DOCS_REPOSITORY } from '../agent/code.ts';
import { ToolError } from '../agent/types.ts';
import { type Checkout, classifyGitError, fetchIntoCheckout, gitReason } from '../git/checkout.ts';
import { type CodeSource, GitCodeReader } from '../git/code-reader.ts';
import { openContextRepository } from '../git/context-repository.ts';
import { credentialSecrets } from '../git/credentials.ts';
import { GitError } from '../git/git.ts';
import { type CodeHost, type GitAccessOptions, gitAccess, HostError } from '../git/hosts/index.ts';
import type { MirrorCache } from '../git/mirror.ts';
import type { ContextRepositoryAccess } from '../projects/context-repositories.ts';
import { gitCodeContext, servedRepositories } from './code-context.ts';
import type { RunnableJob, RunnableRun } from './runner.ts';

/** A context repository configured on the project, as the run reads it. */
export interface ContextRepositorySource {
  /** Its slug: its code appears under `_context/<name>/`. */
  name: string;
  /** Clone URL without credentials. */
  url: string;
  /** Credentials for git (gitCredentialEnv of the repository's token), `{}` when anonymous. */
  env: Record<string, string>;
  /** The commit to read: the head of the job's change of this repository, when there is one. */
  commit?: string;
  /** Else the branch or tag to read at its tip (default: the remote's default branch). */
  ref?: string;
}

/** What a run reads besides its checkout. */
export interface RunCodeContext {
  /** The project's context repositories (at most 10; `docs` is reserved). */
  contextRepositories: ContextRepositorySource[];
  /** The job's changes, resolved through the hosts (src/git/hosts/change.ts `getChange`), in the job's order. */
  changes: AgentChange[];
  /**
   * The commit the project's own code outside `docsDir` is read at: the head of the job's change
   * of the docs repository, when it has one (default: the checkout's base).
   */
  docsCommit?: string;
}

/**
 * Gives a run its code context; called before the checkout. Throwing a HostError fails the run
 * with its code (e.g. `change-unavailable`) before any model call.
 */
export type ResolveCodeContext = (
  job: RunnableJob,
  run: RunnableRun,
  signal: AbortSignal,
) => Promise<RunCodeContext>;

export const noCodeContext: ResolveCodeContext = async () => ({ contextRepositories: [], changes: [] });

/**
 * A run's code context from the project's context repositories and the job's resolved changes:
 * each repository at the head of the job's (first) change of it, else at its ref; the project's
 * own code at the head of its change, when the job documents one.
 */
export async function codeContextOf(
  repositories: readonly ContextRepositoryAccess[],
  hosts: ReadonlyMap<string, CodeHost>,
  resolved: readonly AgentChange[],
  signal: AbortSignal,
  gitOptions: GitAccessOptions = {},
): Promise<RunCodeContext> {
  const headOf = (name: string) => resolved.find((r) => r.repository === name)?.headSha;
  const contextRepositories = await Promise.all(
    repositories.map(async (repository): Promise<ContextRepositorySource> => {
      const access = await gitAccess(hosts.get(repository.name)!, signal, gitOptions).catch(
        (error: unknown) => {
          throw signal.aborted ? error : contextUnavailable(repository, error);
        },
      );
      const commit = headOf(repository.name);
      return {
        name: repository.name,
        url: access.url,
        env: access.env,
        ...(commit ? { commit } : repository.ref ? { ref: repository.ref } : {}),
      };
    }),
  );
  const docsCommit = headOf(DOCS_REPOSITORY);
  return {
    contextRepositories,
    changes: [...resolved],
    ...(docsCommit && { docsCommit }),
  };
}

/** The readers of one run; `close` when the agent is done. */
export interface RunCode {
  reader: CodeReader;
  description: CodeDescription;
  /** Secrets of the context repositories' credentials, for the run's redactor. */
  secrets: string[];
  close(): Promise<void>;
}

export interface OpenRunCodeOptions {
  checkout: Checkout;
  /** The project's own remote's credentials (for blobs the mirror lacks). */
  env?: Record<string, string>;
  redact: (text: string) => string;
  docsDir: string;
  cache: MirrorCache;
  project: string;
  context: RunCodeContext;
  maxFileBytes: number;
  signal: AbortSignal;
  /** Told of a context repository that could not be opened and is left out. */
  onUnavailable?: (name: string, error: unknown) => void;
}

/**
 * Opens the run's readers. A context repository that cannot be fetched fails the run when the
 * job documents a change of it (the change's code is the point), and is left out otherwise.
 */
export async function openRunCode(options: OpenRunCodeOptions): Promise<RunCode> {
  const readers = new Map<string, CodeSource>();
  const closers: (() => Promise<void>)[] = [];
  const secrets: string[] = [];
  let closed = false;
  const close = async () => {
    closed = true;
    for (const closeOne of closers) await closeOne().catch(() => {});
  };
  try {
    if (options.docsDir !== '.' && options.docsDir !== '') {
      const { checkout } = options;
      const commit = options.context.docsCommit ?? checkout.base;
      if (commit !== checkout.base) await fetchCommit(checkout, commit, options);
      const reader = new GitCodeReader({
        cwd: checkout.dir,
        commit,
        ...(options.env ? { env: options.env } : {}),
        redact: options.redact,
        ...(checkout.context ? { lock: checkout.context.lock } : {}),
        signal: options.signal,
      });
      readers.set(DOCS_REPOSITORY, reader);
      closers.push(async () => reader.close());
    }
    const changed = new Set(options.context.changes.map((c) => c.repository));
    for (const source of options.context.contextRepositories.slice(0, 10)) {
      if (source.name === DOCS_REPOSITORY || readers.has(source.name)) continue;
      secrets.push(...credentialSecrets(source.env));
      const open = () =>
        openContextRepository({
          cache: options.cache,
          project: options.project,
          remote: source.url,
          env: source.env,
          ...(source.commit ? { commit: source.commit } : {}),
          ...(source.ref ? { ref: source.ref } : {}),
          signal: options.signal,
        }).then(async (opened) => {
          // Opened after the run's code was closed (a read still under way at the end): closed at once.
          if (closed) await opened.close();
          else closers.push(opened.close);
          return opened.reader;
        });
      // A repository the job documents a change of is opened now (its code is the point: failing
      // to fetch it fails the run); the others when the agent first reads them, so that a job that
      // reads no code pays nothing for ten context repositories.
      if (changed.has(source.name)) {
        const opened = await open().catch((error: unknown) => {
          throw options.signal.aborted ? error : contextUnavailable(source, error, options.redact);
        });
        readers.set(source.name, opened);
      } else readers.set(source.name, lazySource(source.name, open, options.onUnavailable));
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    reader: gitCodeContext({ readers, maxFileBytes: options.maxFileBytes }),
    description: { repositories: servedRepositories(readers) },
    secrets,
    close,
  };
}

/**
 * `context-unavailable`: a context repository the run must read could not be fetched, with git's
 * or the host's answer (redacted) in the message, so that the job's record says why.
 */
function contextUnavailable(
  repository: { name: string; url?: string; repository?: string },
  error: unknown,
  redact: (text: string) => string = (text) => text,
): HostError {
  const classified = classifyGitError(error);
  const answer =
    classified instanceof HostError
      ? classified.message
      : error instanceof GitError
        ? gitReason(error)
        : error instanceof Error
          ? error.message
          : String(error);
  const where = repository.repository ?? repository.url;
  return new HostError(
    'context-unavailable',
    redact(
      `the context repository "${repository.name}"${where ? ` (${where})` : ''} could not be fetched: ${answer}`,
    ),
    { cause: error },
  );
}

/**
 * A code source that opens its repository on the first read, once; when that fails, each read is
 * a tool error naming the repository (the run goes on: the agent can do without it).
 */
function lazySource(
  name: string,
  open: () => Promise<CodeSource>,
  onUnavailable: ((name: string, error: unknown) => void) | undefined,
): CodeSource {
  let opening: Promise<CodeSource> | undefined;
  const source = () => {
    opening ??= open().catch((error: unknown) => {
      onUnavailable?.(name, error);
      throw new ToolError(`The context repository "${name}" cannot be read now: it could not be fetched.`);
    });
    return opening;
  };
  return {
    list: async (...args) => (await source()).list(...args),
    read: async (...args) => (await source()).read(...args),
    scan: async (...args) => (await source()).scan(...args),
    changedPaths: async (...args) => (await source()).changedPaths(...args),
    pathDiff: async (...args) => (await source()).pathDiff(...args),
  };
}

/**
 * Fetches `commit` (trees only, when the checkout is a partial one) into the checkout's
 * repository, under its mirror's lock; the worktree is left as it is.
 */
async function fetchCommit(checkout: Checkout, commit: string, options: OpenRunCodeOptions): Promise<void> {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit))
    throw new Error(`the commit ${JSON.stringify(commit)} is not a full commit id`);
  const filter = checkout.sparse ? ['--filter=blob:none'] : [];
  await fetchIntoCheckout(
    checkout,
    ['--quiet', '--no-tags', '--no-write-fetch-head', '--depth', '1', ...filter, 'origin', commit],
    { ...(options.env ? { env: options.env } : {}), redact: options.redact, signal: options.signal },
  ).catch((error: unknown) => {
    throw classifyGitError(error);
  });
}
