/**
 * docs/api/mintlify-v1.mdx's `branch`, checked before a v1 job exists: the job's base branch or the repository's
 * default branch gets 400, an existing branch docwright did not create 409 `branch-exists`; a
 * branch docwright created for an earlier job of the project is continued. The repository is
 * asked which branches exist; when it cannot be asked, the job is created and its run applies
 * the same rule (src/git/head-branch.ts) before it starts, and again when it pushes.
 */

import { DocwrightError } from '../errors.ts';
import { headBranchRefusal } from '../git/head-branch.ts';
import { createHost, gitAccess } from '../git/hosts/index.ts';
import { listRemoteRefs } from '../git/remote-refs.ts';
import type { Logger } from '../logger.ts';
import { confidentialValues, type ProjectService } from '../projects/projects.ts';
import { createRedactor, type Redact } from '../redact.ts';

/** How long the request waits for the repository's answer before leaving the check to the run. */
const REMOTE_TIMEOUT_MS = 15_000;

export async function checkRequestedBranch(
  deps: {
    projects: Pick<ProjectService, 'get' | 'getSecrets'>;
    /** Whether docwright created `branch` for an earlier job of the project. */
    ownsBranch: (projectId: string, branch: string) => Promise<boolean>;
    log: Pick<Logger, 'warn'>;
    /** `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`: see git/repository-address.ts. */
    allowLinkLocal?: boolean;
  },
  projectId: string,
  branch: string,
): Promise<void> {
  const { projects, log } = deps;
  const project = await projects.get(projectId);
  let remote: { defaultBranch: string | null; exists: boolean } = { defaultBranch: null, exists: false };
  if (branch !== project.ref) {
    let redact: Redact = (text) => text;
    try {
      const secrets = await projects.getSecrets(projectId);
      redact = createRedactor(confidentialValues(secrets));
      const signal = AbortSignal.timeout(REMOTE_TIMEOUT_MS);
      const addresses = { allowLinkLocal: deps.allowLinkLocal };
      const access = await gitAccess(createHost(project, secrets, addresses), signal, addresses);
      if (access.token) redact = createRedactor([...confidentialValues(secrets), access.token]);
      const head = `refs/heads/${branch}`;
      const listed = await listRemoteRefs(access.url, [head], { env: access.env, redact, signal });
      remote = { defaultBranch: listed.defaultBranch, exists: listed.refs.has(head) };
    } catch (error) {
      log.warn(
        { err: { message: redact(error instanceof Error ? error.message : String(error)) }, projectId },
        'could not ask the repository about the requested branch; the run checks it before it starts',
      );
    }
  }
  const refusal = await headBranchRefusal({
    branch,
    base: project.ref,
    ...remote,
    owned: () => deps.ownsBranch(projectId, branch),
  });
  if (!refusal) return;
  if (refusal.code === 'branch-exists') throw new DocwrightError('branch-exists', refusal.message);
  throw new DocwrightError('invalid-request', refusal.message, {
    fields: [{ field: 'branch', message: refusal.message }],
  });
}
