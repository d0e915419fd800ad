/**
 * Resolving a run's code changes through their hosts before the model starts
 * (docs/code-context.mdx): a change the host cannot find or show to the repository's
 * credentials ends the run with `change-unavailable`, the host's answer in the message, before
 * any model call. The shapes and their conversions are in src/jobs/changes.ts.
 */
import type { AgentChange } from '../agent/change.ts';
import { RESOLVED_CHANGE_FILES } from '../agent/change.ts';
import { type CodeHost, HostError } from '../git/hosts/index.ts';
import { type ChangeRequest, changeLabel, changeRef } from '../jobs/changes.ts';

/**
 * Fetches each change from its repository's host, in order: git's change with the name of the
 * repository it belongs to, as the agent reads it. `hostOf` gives the host of a repository name
 * with that repository's credentials (undefined: the repository was removed since the request
 * named it).
 */
export async function resolveChanges(
  requests: readonly ChangeRequest[],
  hostOf: (repository: string) => CodeHost | undefined,
  signal?: AbortSignal,
): Promise<AgentChange[]> {
  const resolved: AgentChange[] = [];
  for (const request of requests) {
    const host = hostOf(request.repository);
    if (!host) {
      throw new HostError(
        'change-unavailable',
        `${changeLabel(request)}: the repository ${request.repository} is no longer one of this project's context repositories`,
      );
    }
    try {
      const change = await host.getChange(changeRef(request), {
        limits: { maxFiles: RESOLVED_CHANGE_FILES },
        signal,
      });
      resolved.push({ repository: request.repository, ...change });
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
