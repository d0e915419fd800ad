/**
 * The `local` host (docs/configuration.mdx): the repository is on this machine; runs clone
 * it and push their branch back to it, and no pull request is opened.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { git } from '../git.ts';
import { findDefaultBranch, localRepositoryProblem } from '../inspect.ts';
import { type CodeHost, HostError } from './host.ts';
import { localChanges } from './local-changes.ts';

export function createLocalHost(project: { repository: string }): CodeHost {
  /** Changes are read in the repository itself, with git. */
  const changes = () => {
    let dir: string;
    try {
      dir = fileURLToPath(project.repository);
    } catch {
      throw new HostError('change-unavailable', `${project.repository} is not a local path`);
    }
    return localChanges(dir);
  };
  return {
    kind: 'local',
    getChange: (ref, options) => changes().getChange(ref, options),
    commentOnChange: (number, body, signal) => changes().commentOnChange(number, body, signal),
    listMergedChanges: (query) => changes().listMergedChanges(query),

    async gitRemote() {
      // A file:// URL needs no credentials; git pushes straight into the repository.
      return { url: project.repository, env: {} };
    },

    async ensurePullRequest() {
      return null;
    },

    async defaultBranch() {
      return (await findDefaultBranch(project.repository)) ?? null;
    },

    async checkAccess(signal) {
      let dir: string;
      try {
        dir = fileURLToPath(project.repository);
      } catch {
        return { read: false, push: false, detail: `${project.repository} is not a local path` };
      }
      const problem = await localRepositoryProblem(dir);
      if (problem) return { read: false, push: false, detail: problem };
      try {
        const gitDir = (await git(['rev-parse', '--absolute-git-dir'], { cwd: dir, signal })).trim();
        await access(gitDir, constants.W_OK);
        return { read: true, push: true, detail: `branches are pushed to ${dir}` };
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        const reason = error instanceof Error ? error.message : String(error);
        return { read: true, push: false, detail: `cannot write to the repository at ${dir}: ${reason}` };
      }
    },
  };
}
