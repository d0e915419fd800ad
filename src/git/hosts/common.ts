/**
 * What the code-host implementations share above HTTP (http.ts): their
 * options and types, the idempotent "open or reuse" pull request flow, the
 * mapping of failures to stable `HostError` codes, and the parsing of
 * repository URLs.
 */

import type { Redact } from '../../redact.ts';
import { type RetryPolicy, sleep } from '../../retry.ts';
import { isWebLink } from '../../web-link.ts';
import type { GitCredentials } from '../credentials.ts';
import type { PullRequestConversation } from './conversation.ts';
import {
  type AccessReport,
  type CodeHost,
  HostError,
  type HostErrorCode,
  type HostProject,
  type PullRequest,
  type PullRequestInput,
} from './host.ts';
import { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, HttpFailure, hintedDelayMs } from './http.ts';

export type { GitCredentials, HostProject };

export interface HostOptions {
  /** The fetch the host's HTTP client uses (tests, proxies). */
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  /** Per-request timeout in ms (default 30 s); a request that takes longer is a network failure. */
  timeoutMs?: number;
  /** The clock that decides when cached tokens are renewed (tests). */
  now?: () => number;
  /**
   * Allow API URLs on link-local and cloud metadata addresses
   * (`DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1`); by default they are refused before any request.
   */
  allowLinkLocal?: boolean | undefined;
}

export interface HostPullRequest extends PullRequest {
  /** Things worth telling the user that did not stop the pull request (a skipped label…). */
  notes: string[];
}

export function retryPolicy(options: HostOptions): RetryPolicy {
  return { ...DEFAULT_RETRY, ...options.retry };
}

export const timeoutOf = (options: HostOptions) => options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

/** A code host with an HTTP API (every kind but `local`). */
export interface ApiCodeHost extends CodeHost {
  readonly kind: 'github' | 'gitlab' | 'gitea';
  ensurePullRequest(input: PullRequestInput, signal?: AbortSignal): Promise<HostPullRequest>;
  /** The credentials git should use, or null when the project has none (public read only). */
  gitCredentials(signal?: AbortSignal): Promise<GitCredentials | null>;
  /** Comments and replies on pull requests (docs/pull-request-comments.mdx). */
  readonly conversation: PullRequestConversation;
}

export interface FailureContext {
  /** The host's display name, e.g. `GitHub (api.github.com)`. */
  host: string;
  /** What was being done, e.g. `open a pull request for docwright/abc`. */
  action: string;
  /** The code for failures that are not about credentials or permissions. */
  fallback: HostErrorCode;
  /** The code for a 404 (what was not there: the repository or a branch). */
  notFound: HostErrorCode;
  /** Said after a 404. */
  notFoundMessage?: string;
  /** Removes the host's secrets from what the error says. */
  redact: Redact;
}

/** The stable error for a failure; never carries a secret, nor the HTTP client's request. */
export function toHostError(error: unknown, context: FailureContext): HostError {
  if (error instanceof HostError) return error;
  const clean = context.redact;
  if (!(error instanceof HttpFailure)) {
    const message = error instanceof Error ? error.message : String(error);
    return new HostError(
      context.fallback,
      clean(`could not ${context.action} on ${context.host}: ${message}`),
    );
  }
  const detail = error.message ? `: ${clean(error.message)}` : '';
  const status = error.status;
  const prefix = `could not ${context.action} on ${context.host}`;
  const cause = new HttpFailure(status, clean(error.message), { headers: error.headers });
  if (status === undefined) {
    return new HostError(context.fallback, `${prefix}: no answer (${clean(error.message)})`, {
      retryable: true,
      cause,
    });
  }
  if (error.tooLarge) return new HostError(context.fallback, `${prefix}: ${clean(error.message)}`, { cause });
  if (error.retryable) {
    const wait = hintedDelayMs(error.headers);
    const after = wait !== undefined ? `; try again in ${Math.ceil(wait / 1000)} s` : '';
    const what = status === 429 || error.rateLimited ? 'rate limited' : `HTTP ${status}`;
    return new HostError(context.fallback, `${prefix}: ${what}${detail}${after}`, { retryable: true, cause });
  }
  if (status === 401) {
    return new HostError('host-auth-failed', `${prefix}: the credentials were rejected (401)${detail}`, {
      cause,
    });
  }
  if (status === 403) {
    return new HostError(
      'host-permission-denied',
      `${prefix}: the credentials lack the permission (403)${detail}`,
      { cause },
    );
  }
  if (status === 404) {
    const what = context.notFoundMessage ? `: ${context.notFoundMessage}` : '';
    return new HostError(context.notFound, `${prefix}: not found (404)${what}${detail}`, { cause });
  }
  return new HostError(context.fallback, `${prefix}: HTTP ${status}${detail}`, { cause });
}

/**
 * A failure to read a change as `change-unavailable`, whatever it was (a 404, refused
 * credentials, a host that keeps failing): the job that needs the change cannot start without
 * it, and the message carries the host's answer. Retryable failures stay retryable.
 */
export function toChangeError(
  error: unknown,
  context: Pick<FailureContext, 'host' | 'action' | 'redact'> & { notFoundMessage?: string },
): HostError {
  const mapped = toHostError(error, {
    ...context,
    fallback: 'change-unavailable',
    notFound: 'change-unavailable',
  });
  if (mapped.code === 'change-unavailable') return mapped;
  return new HostError('change-unavailable', mapped.message, {
    retryable: mapped.retryable,
    cause: mapped.cause,
  });
}

/** Longest comment posted (GitHub takes 65,536 characters); a longer body is cut, saying so. */
export const MAX_COMMENT_LENGTH = 60_000;

export function boundComment(body: string): string {
  if (body.length <= MAX_COMMENT_LENGTH) return body;
  return `${body.slice(0, MAX_COMMENT_LENGTH)}\n\n[… cut: the comment was ${body.length} characters long]`;
}

/** A pull request as a host's lookup or create returns it. */
export type PullRequestRef = Pick<PullRequest, 'url' | 'number'>;

/**
 * How `openOrReusePullRequest` came by the pull request: `found` by the
 * lookup (nothing created), `created` by this call, or `conflict`: the host
 * refused the create because one already exists, and the lookup after found
 * it. A `conflict` may be another run's pull request or this call's own, when
 * a create went through but its answer was lost and the retry was refused.
 */
export type PullRequestOutcome = 'found' | 'created' | 'conflict';

/** How often the pull request is looked up after "already exists" before the host's refusal is final. */
const LOOKUPS_AFTER_CONFLICT = 3;

/**
 * Opens the pull request for a branch at most once, however often it is
 * asked: looks up the open one first, creates only when there is none, and
 * takes the host's "already exists" refusal as success with the one that
 * exists.
 *
 * Why: every run of a job pushes to the same branch, and a retried job, a
 * follow-up message or a retried create (after a 5xx, the create may have
 * gone through) must never open a second pull request. The lookup alone is
 * not enough: two runs can both miss and both create, and the loser's
 * create is refused; nor is the first lookup after the refusal, since a
 * host's list can lag behind the write that refused us, so it is tried
 * again with the retry policy's backoff. If the pull request still cannot
 * be found, the refusal itself is thrown.
 *
 * What differs per host stays in the host: `create` holds its fallbacks
 * (GitHub's ready pull request where drafts are refused, branch errors as
 * `ref-not-found`) and must let the "already exists" failure out unchanged;
 * labels that are not part of the create are the caller's, by `outcome`.
 */
export async function openOrReusePullRequest(steps: {
  /** The open pull request from the head branch, or undefined. */
  find: () => Promise<PullRequestRef | undefined>;
  create: () => Promise<PullRequestRef>;
  /** Whether a failure of `create` is the host saying an open one already exists. */
  isAlreadyExists: (error: unknown) => boolean;
  policy: RetryPolicy;
  signal?: AbortSignal | undefined;
}): Promise<PullRequestRef & { outcome: PullRequestOutcome }> {
  const existing = await steps.find();
  if (existing) return withWebLink(existing, 'found');
  let created: PullRequestRef;
  try {
    created = await steps.create();
  } catch (error) {
    if (!steps.isAlreadyExists(error)) throw error;
    const { baseDelayMs, maxDelayMs } = steps.policy;
    for (let lookup = 1; lookup <= LOOKUPS_AFTER_CONFLICT; lookup++) {
      if (lookup > 1) await sleep(Math.min(maxDelayMs, baseDelayMs * 2 ** (lookup - 2)), steps.signal);
      const found = await steps.find();
      if (found) return withWebLink(found, 'conflict');
    }
    throw error;
  }
  return withWebLink(created, 'created');
}

/**
 * The host's pull request, if its link is an http(s) URL. The link becomes the job's `prLink`,
 * which clients open and the dashboard renders as a link: a `javascript:` one from a broken or
 * hostile host fails the job (`pr-create-failed`, through the host's failure mapping) instead of
 * reaching them. A job that completes without a link says that nothing changed, so completing
 * would hide the pull request the host did open; the message names it.
 */
function withWebLink(pr: PullRequestRef, outcome: PullRequestOutcome) {
  if (!isWebLink(pr.url)) {
    const shown = JSON.stringify(String(pr.url).slice(0, 100));
    throw new Error(
      `the host answered #${pr.number} with a link that is not http(s) (${shown}); look for it on the host`,
    );
  }
  return { ...pr, outcome };
}

/**
 * A host's failure mapping, bound to its display name, repository and
 * secrets, so that call sites name only what they were doing; and the two
 * repository-level wrappers every API host puts around `ensurePullRequest`
 * and `checkAccess`.
 */
export function hostFailures(options: {
  /** e.g. `GitHub (api.github.com)`. */
  host: string;
  /** e.g. `octo/docs`. */
  repository: string;
  redact: Redact;
  /** What the host calls a pull request. */
  noun: 'pull request' | 'merge request';
  /** Said after a 404 for the repository (default: `<repository> does not exist or these credentials cannot see it`). */
  missing?: string;
}) {
  const { host, repository, redact, noun } = options;
  // Hosts answer 404, not 403, for a private repository the credentials may not see: a 404 cannot tell the two apart.
  const missing = options.missing ?? `${repository} does not exist or these credentials cannot see it`;
  const context = (
    action: string,
    fallback: HostErrorCode,
    notFound: HostErrorCode,
    notFoundMessage?: string,
  ): FailureContext => ({ host, action, fallback, notFound, notFoundMessage, redact });

  return {
    context,

    /** Runs `ensurePullRequest`'s body; any failure comes out as a `HostError`, the caller's abort as is. */
    async pullRequest<T>(input: PullRequestInput, signal: AbortSignal | undefined, run: () => Promise<T>) {
      try {
        return await run();
      } catch (error) {
        // A cancelled job is not a host failure.
        if (signal?.aborted) throw signal.reason;
        const action = `open a ${noun} for ${input.branch} in ${repository}`;
        throw toHostError(error, context(action, 'pr-create-failed', 'host-permission-denied', missing));
      }
    },

    /** Runs a read of the repository (its default branch); any failure comes out as a `HostError`. */
    async read<T>(signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
      try {
        return await run();
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw toHostError(
          error,
          context(`read ${repository}`, 'host-permission-denied', 'host-permission-denied', missing),
        );
      }
    },

    /** Runs `checkAccess`'s body; a failure is reported, not thrown, so that doctor can say what is wrong. */
    async access(signal: AbortSignal | undefined, run: () => Promise<AccessReport>): Promise<AccessReport> {
      try {
        return await run();
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        const failure = toHostError(
          error,
          context(`read ${repository}`, 'host-permission-denied', 'host-permission-denied', missing),
        );
        return { read: false, push: false, detail: `${failure.code}: ${failure.message}` };
      }
    },

    /** A create refused for its head or base branch: `ref-not-found` (was the branch pushed?), not a generic failure. */
    branchNotFound(input: PullRequestInput, failure: HttpFailure): HostError {
      return new HostError(
        'ref-not-found',
        `could not open a ${noun} from ${input.branch} into ${input.base} on ${host}: ${failure.message}`,
        { cause: new HttpFailure(failure.status, failure.message) },
      );
    },
  };
}

export interface RemoteRepository {
  /** The normalised web URL (no `.git`). */
  url: string;
  /** `https://host[:port]`. */
  origin: string;
  /** Path segments of the repository (owner, name; GitLab: the whole namespace path). */
  segments: string[];
}

/** Splits a project's repository URL (already normalised by projects/repository.ts). */
export function parseRemoteRepository(repository: string): RemoteRepository {
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    throw new HostError('ref-not-found', `repository ${repository} is not a URL`);
  }
  const pathname = url.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
  const segments = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (segments.length < 2) {
    throw new HostError('ref-not-found', `repository ${repository} does not name owner/repository`);
  }
  return { url: `${url.origin}${pathname}`, origin: url.origin, segments };
}

/** An API base without its trailing slash. */
export const trimSlash = (url: string) => url.replace(/\/+$/, '');
