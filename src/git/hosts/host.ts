/**
 * What docwright needs from a code host, one implementation per file in this
 * folder. Hosts know nothing of jobs or the database.
 */
import type {
  Change,
  ChangeComment,
  ChangeRef,
  GetChangeOptions,
  MergedChanges,
  MergedChangesQuery,
} from './change.ts';

/** The kinds of code host (docs/configuration.mdx); `local` is a repository on this machine. */
export const HOST_KINDS = ['github', 'gitlab', 'gitea', 'local'] as const;
export type HostKind = (typeof HOST_KINDS)[number];

/** Where a project's repository lives, as a host needs it. */
export interface HostProject {
  host: HostKind;
  repository: string;
  apiUrl: string | null;
}

/** The credentials a host may use (a project's secrets; hosts take only these). */
export interface HostCredentials {
  token?: string | undefined;
  githubAppId?: string | undefined;
  githubPrivateKey?: string | undefined;
  githubInstallationId?: string | undefined;
}

/** Stable failure codes of host and git operations (they become the job's `error.code`). */
export type HostErrorCode =
  | 'host-auth-failed'
  | 'host-permission-denied'
  | 'repository-not-found'
  | 'ref-not-found'
  | 'invalid-branch-name'
  | 'branch-not-allowed'
  | 'branch-exists'
  | 'push-rejected'
  | 'pr-create-failed'
  /** A change (pull request, commit, range) the host cannot find or show to these credentials. */
  | 'change-unavailable'
  /** A context repository a run must read could not be fetched (git's or the host's answer in the message). */
  | 'context-unavailable'
  | 'comment-failed'
  /** Merged changes of a branch could not be listed (the polling fallback). */
  | 'listing-failed'
  /** The repository's address is link-local or a cloud metadata service (git/repository-address.ts). */
  | 'repository-address-refused';

export class HostError extends Error {
  readonly code: HostErrorCode;
  /** Whether trying again later may succeed (rate limits, 5xx, network). */
  readonly retryable: boolean;
  constructor(code: HostErrorCode, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'HostError';
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

export interface PullRequestInput {
  /** Head branch (already pushed). */
  branch: string;
  /** Base branch the pull request targets. */
  base: string;
  title: string;
  body: string;
  draft: boolean;
  labels: string[];
}

export interface PullRequest {
  url: string;
  number: number;
  /** False when an open pull request for the branch already existed. */
  created: boolean;
}

/** What `docwright doctor` is told about the credentials. */
export interface AccessReport {
  read: boolean;
  push: boolean;
  detail: string;
}

/** Where git clones from and pushes to, and the environment that carries credentials to git (never the URL). */
export interface GitRemote {
  url: string;
  env: Record<string, string>;
}

export interface CodeHost {
  readonly kind: 'github' | 'gitlab' | 'gitea' | 'local';
  gitRemote(signal?: AbortSignal): Promise<GitRemote>;
  /**
   * Opens a pull request for `input.branch`, or returns the open one: looks
   * it up first and treats "already exists" as success, so retried and
   * follow-up runs never open a second. `null` for hosts without pull
   * requests (local).
   */
  ensurePullRequest(input: PullRequestInput, signal?: AbortSignal): Promise<PullRequest | null>;
  /** For `docwright doctor`: can the credentials read the repository and push to it? */
  checkAccess(signal?: AbortSignal): Promise<AccessReport>;
  /** The repository's default branch as the host reports it; null when it has none (empty). */
  defaultBranch(signal?: AbortSignal): Promise<string | null>;
  /**
   * A pull/merge request, a commit or a range of commits (docs/code-context.mdx), bounded by
   * `options.limits`. Fails with `change-unavailable`, the host's answer in the message, when
   * the host cannot find it or the credentials may not see it.
   */
  getChange(ref: ChangeRef, options?: GetChangeOptions): Promise<Change>;
  /** Comments on pull/merge request `number` (`local` has none: `change-unavailable`). */
  commentOnChange(number: number, body: string, signal?: AbortSignal): Promise<ChangeComment>;
  /**
   * Pull/merge requests merged into `query.ref` after the cursor, and commits pushed to it
   * directly, oldest first, at most `query.limit` of each, with the cursor to list from next
   * (docs/automations.mdx's polling fallback).
   */
  listMergedChanges(query: MergedChangesQuery): Promise<MergedChanges>;
}
