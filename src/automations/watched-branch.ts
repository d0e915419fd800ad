/**
 * The branch whose changes count for a watched repository (docs/automations.mdx: "merged into a context
 * repository's `ref`"): its `ref`, else its default branch as the host reports it. The host is
 * asked at most once per `DEFAULT_BRANCH_TTL_MS` for each repository, so that webhooks, polls and
 * batches of a repository without `ref` cost no extra request each; a failed answer is not
 * remembered.
 */
import { createHost, type HostOptions } from '../git/hosts/index.ts';
import type { WatchedRepository } from './repositories.ts';

/** A repository's default branch through its host (injectable: tests give their own). */
export type DefaultBranchOf = (repository: WatchedRepository, signal?: AbortSignal) => Promise<string | null>;

/** How long a default branch is remembered: a renamed default branch is noticed within this time. */
export const DEFAULT_BRANCH_TTL_MS = 10 * 60_000;
const CACHE_SIZE = 1_000;

/** Asks each repository's host; `hostOptions.allowLinkLocal`: `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`. */
export const defaultBranchThroughHost =
  (hostOptions: HostOptions = {}): DefaultBranchOf =>
  (repository, signal) =>
    createHost(
      { host: repository.host, repository: repository.repository, apiUrl: repository.apiUrl },
      { token: repository.token },
      hostOptions,
    ).defaultBranch(signal);

/** The watched branch of a repository; null when it has no `ref` and the host cannot tell. */
export type WatchedBranchOf = (repository: WatchedRepository, signal?: AbortSignal) => Promise<string | null>;

export function watchedBranches(
  defaultBranchOf: DefaultBranchOf = defaultBranchThroughHost(),
  now: () => number = Date.now,
): WatchedBranchOf {
  const known = new Map<string, { branch: string | null; until: number }>();
  return async (repository, signal) => {
    if (repository.ref !== null) return repository.ref;
    const key = `${repository.host} ${repository.apiUrl ?? ''} ${repository.repository}`;
    const cached = known.get(key);
    if (cached && cached.until > now()) return cached.branch;
    const branch = await defaultBranchOf(repository, signal).catch(() => undefined);
    if (branch === undefined) return null;
    known.delete(key);
    if (known.size >= CACHE_SIZE) known.delete(known.keys().next().value!);
    known.set(key, { branch, until: now() + DEFAULT_BRANCH_TTL_MS });
    return branch;
  };
}
