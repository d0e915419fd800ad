import type { ProjectSettings } from './projects.ts';

/** The head branch of a job: the project's prefix and the job id's last eight characters. */
export const headBranch = (settings: Pick<ProjectSettings, 'branchPrefix'>, jobId: string): string =>
  `${settings.branchPrefix}${jobId.slice(-8)}`;
