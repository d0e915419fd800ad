/**
 * Where docwright may push a job's head branch (docs/api/mintlify-v1.mdx): never to the job's base branch or the
 * repository's default branch, and to a branch that already exists only when docwright created
 * it for a job of the same project (the job then continues it). Asked when a v1 job names its
 * branch, when a run checks out, and by the pusher itself, whoever made the job.
 */
import { HostError } from './hosts/host.ts';

export interface HeadBranchFacts {
  branch: string;
  /** The job's base ref. */
  base: string;
  /** The remote's default branch (its HEAD), when known. */
  defaultBranch: string | null;
  /** Whether the branch exists on the remote (and is not what an earlier attempt of the same run pushed). */
  exists: boolean;
  /** Whether docwright created the branch for this project; asked only when it exists. */
  owned: () => Promise<boolean>;
}

/** Why docwright must not push to the branch (`branch-not-allowed`, `branch-exists`), or undefined. */
export async function headBranchRefusal(facts: HeadBranchFacts): Promise<HostError | undefined> {
  const { branch } = facts;
  const what =
    branch === facts.base
      ? "the job's base branch"
      : branch === facts.defaultBranch
        ? "the repository's default branch"
        : undefined;
  if (what) {
    return new HostError(
      'branch-not-allowed',
      `docwright never pushes to ${branch}: it is ${what}, and its changes go to a branch of their own for review`,
    );
  }
  if (facts.exists && !(await facts.owned())) {
    return new HostError(
      'branch-exists',
      `the branch ${branch} already exists and docwright did not create it: name a new branch, or one docwright created for an earlier job of this project`,
    );
  }
  return undefined;
}
