/**
 * Whether a project's `ref` exists in its repository, told when the project is created or its
 * ref or repository changes (issue 35): a bare repository whose HEAD names a branch nobody pushed
 * gave its name as the default branch, and the first job failed `ref-not-found`. No warning when
 * the repository cannot be listed from here (the host's credentials, the network): the job will
 * say so itself.
 */
import { createHost, gitAccess } from '../git/hosts/index.ts';
import { listRemoteRefs } from '../git/inspect.ts';
import type { ProjectSecrets, ProjectView } from '../projects/projects.ts';

/** How many branches a warning names at most. */
const NAMED_BRANCHES = 10;

/**
 * Why jobs of the project would fail `ref-not-found`, or undefined. `remedy` says how to choose
 * another ref where the reader is (a command, the settings page).
 */
export async function refWarning(
  project: ProjectView,
  secrets: ProjectSecrets,
  remedy = `choose another with docwright project update ${project.id} --ref <branch>`,
): Promise<string | undefined> {
  const access =
    project.host === 'local'
      ? { url: project.repository, env: {} }
      : await gitAccess(createHost(project, secrets)).catch(() => undefined);
  if (!access) return undefined;
  const refs = await listRemoteRefs(access.url, access.env);
  if (!refs) return undefined;
  if (refs.branches.includes(project.ref) || refs.tags.includes(project.ref)) return undefined;
  const named = refs.branches.slice(0, NAMED_BRANCHES).join(', ');
  const more =
    refs.branches.length > NAMED_BRANCHES ? `, and ${refs.branches.length - NAMED_BRANCHES} more` : '';
  const has =
    refs.branches.length > 0 ? `its branches are ${named}${more}` : 'it has no branch yet (push one first)';
  return (
    `the ref ${project.ref} does not exist in ${project.repository} (${has}): ` +
    `jobs of this project will fail with ref-not-found until it does; ${remedy}`
  );
}
