/**
 * Resolving a run's code changes through their hosts before the model starts
 * (docs/code-context.mdx): a change the host cannot find or show to the repository's
 * credentials ends the run with `change-unavailable`, the host's answer in the message, before
 * any model call.
 */
import { RESOLVED_CHANGE_FILES } from '../agent/change.ts';
import type { Change, ChangeRef } from '../git/hosts/change.ts';
import { type CodeHost, HostError } from '../git/hosts/index.ts';
import type { ChangeRequest, ResolvedJobChange } from '../jobs/changes.ts';

/** A change as the host gave it, with the name of the repository it belongs to. */
export interface ResolvedChange {
  /** The context repository's name, or `docs` for the project's own. */
  repository: string;
  change: Change;
}

/** How a change is called in messages: `docs#42`, `api@1a2b3c4`, `api 1a2b..3c4d`. */
export function changeLabel(request: ChangeRequest): string {
  if (request.kind === 'pull-request') return `${request.repository}#${request.number}`;
  if (request.kind === 'commit') return `${request.repository}@${request.sha.slice(0, 12)}`;
  return `${request.repository} ${request.base}..${request.head}`;
}

const refOf = (request: ChangeRequest): ChangeRef =>
  request.kind === 'pull-request'
    ? { kind: 'pull-request', number: request.number }
    : request.kind === 'commit'
      ? { kind: 'commit', sha: request.sha }
      : { kind: 'range', base: request.base, head: request.head };

/**
 * Fetches each change from its repository's host, in order. `hostOf` gives the host of a
 * repository name with that repository's credentials (undefined: the repository was removed
 * since the request named it).
 */
export async function resolveChanges(
  requests: readonly ChangeRequest[],
  hostOf: (repository: string) => CodeHost | undefined,
  signal?: AbortSignal,
): Promise<ResolvedChange[]> {
  const resolved: ResolvedChange[] = [];
  for (const request of requests) {
    const host = hostOf(request.repository);
    if (!host) {
      throw new HostError(
        'change-unavailable',
        `${changeLabel(request)}: the repository ${request.repository} is no longer one of this project's context repositories`,
      );
    }
    try {
      resolved.push({
        repository: request.repository,
        change: await host.getChange(refOf(request), { limits: { maxFiles: RESOLVED_CHANGE_FILES }, signal }),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      if (error instanceof HostError)
        throw new HostError('change-unavailable', `${changeLabel(request)}: ${error.message}`, {
          cause: error,
        });
      throw error;
    }
  }
  return resolved;
}

/** The AgentJob's view of resolved changes. */
export const jobChanges = (resolved: readonly ResolvedChange[]): ResolvedJobChange[] =>
  resolved.map(({ repository, change }) => ({
    repository,
    kind: change.kind,
    number: change.number,
    sha: change.headSha,
    url: change.url,
    title: change.title,
  }));
