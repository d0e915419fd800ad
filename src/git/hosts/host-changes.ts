/**
 * A host's three change operations (`getChange`, `commentOnChange`, `listMergedChanges`) from
 * what differs per host — how to read each kind of change, post a comment, and list a branch's
 * merges and commits — with the failures mapped once: reading fails as `change-unavailable`
 * (the host's answer in the message), commenting as `comment-failed` (`change-unavailable` for a
 * pull request that is not there), listing as `listing-failed`; the caller's abort goes through
 * as is.
 */
import type { Redact } from '../../redact.ts';
import type { Change, ChangeComment, ChangeRef, GetChangeOptions, MergedChangesQuery } from './change.ts';
import { boundComment, toChangeError, toHostError } from './common.ts';
import { type CodeHost, HostError } from './host.ts';
import type { JsonApi } from './http.ts';
import { listMergedChanges, type MergedChangesSource } from './merged-changes.ts';

/** What a host's change readers use of its API (GitHub, Gitea: a repository under `/repos/…`). */
export interface RepositoryApi {
  request: JsonApi;
  /** `/repos/{owner}/{repo}`. */
  repoPath: string;
  /** `owner/repo`, for messages. */
  fullName: string;
  /** The host's display name, e.g. `GitHub (api.github.com)`. */
  host: string;
  redact: Redact;
}

export interface ChangeReaders {
  pullRequest(number: number, options: GetChangeOptions): Promise<Change>;
  commit(sha: string, options: GetChangeOptions): Promise<Change>;
  range(base: string, head: string, options: GetChangeOptions): Promise<Change>;
  /** Posts `body` (already bounded) on pull request `number`. */
  comment(number: number, body: string, signal?: AbortSignal): Promise<ChangeComment>;
  /** Where the merges into, and the commits of, `query.ref` are listed. */
  mergedChanges(query: MergedChangesQuery): MergedChangesSource;
}

export function hostChanges(
  context: {
    /** e.g. `GitHub (api.github.com)`. */
    host: string;
    /** e.g. `octo/api`. */
    repository: string;
    redact: Redact;
    /** What the host calls a pull request, and the mark before its number. */
    noun: 'pull request' | 'merge request';
    mark: '#' | '!';
  },
  readers: ChangeReaders,
): Pick<CodeHost, 'getChange' | 'commentOnChange' | 'listMergedChanges'> {
  const { host, repository, redact, noun, mark } = context;
  const describe = (ref: ChangeRef) =>
    ref.kind === 'pull-request'
      ? `read ${noun} ${mark}${ref.number} of ${repository}`
      : ref.kind === 'commit'
        ? `read commit ${ref.sha} of ${repository}`
        : `compare ${ref.base}...${ref.head} in ${repository}`;

  return {
    async getChange(ref, options = {}) {
      try {
        if (ref.kind === 'pull-request') return await readers.pullRequest(ref.number, options);
        if (ref.kind === 'commit') return await readers.commit(ref.sha, options);
        return await readers.range(ref.base, ref.head, options);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        throw toChangeError(error, { host, action: describe(ref), redact });
      }
    },

    async commentOnChange(number, body, signal) {
      try {
        return await readers.comment(number, boundComment(body), signal);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw toHostError(error, {
          host,
          action: `comment on ${noun} ${mark}${number} of ${repository}`,
          fallback: 'comment-failed',
          notFound: 'change-unavailable',
          notFoundMessage: `${repository} has no ${noun} ${mark}${number}, or these credentials cannot see it`,
          redact,
        });
      }
    },

    async listMergedChanges(query) {
      try {
        return await listMergedChanges(query, readers.mergedChanges(query));
      } catch (error) {
        if (query.signal?.aborted) throw query.signal.reason;
        const failure = toHostError(error, {
          host,
          action: `list the changes merged into ${query.ref} of ${repository}`,
          fallback: 'listing-failed',
          notFound: 'listing-failed',
          notFoundMessage: `${repository} or its branch ${query.ref} does not exist, or these credentials cannot see it`,
          redact,
        });
        if (failure.code !== 'change-unavailable') throw failure;
        throw new HostError('listing-failed', failure.message, {
          retryable: failure.retryable,
          cause: failure.cause,
        });
      }
    },
  };
}
