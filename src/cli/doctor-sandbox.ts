/**
 * `docwright doctor`'s answer to "can check commands run here?" (SPEC §19): bubblewrap present and
 * working, or missing but the operator allowed commands without it, or missing and commands
 * refused — which fails only the projects that have commands.
 */
import { sandboxMode } from '../agent/verify/sandbox.ts';
import type { ProjectView } from '../projects/projects.ts';
import type { Outcome } from './doctor-probes.ts';

/** The machine-wide line. */
export async function checkSandbox(env: NodeJS.ProcessEnv): Promise<Outcome> {
  const mode = await sandboxMode(env);
  if (mode.kind === 'bwrap') {
    return { status: 'ok', detail: 'check commands run isolated with bubblewrap (bwrap)' };
  }
  if (mode.kind === 'unsandboxed') {
    return {
      status: 'warn',
      detail: `check commands run WITHOUT isolation (DOCWRIGHT_CHECKS_UNSANDBOXED=1): ${mode.reason}`,
    };
  }
  return { status: 'warn', detail: `check commands cannot run: ${mode.reason}` };
}

/** A project's line, only for a project that has check commands. */
export async function checkProjectChecks(env: NodeJS.ProcessEnv, project: ProjectView): Promise<Outcome> {
  const count = `${project.checks.length} check command${project.checks.length === 1 ? '' : 's'}`;
  const mode = await sandboxMode(env);
  if (mode.kind === 'refused') return { status: 'fail', detail: `${count} will be skipped: ${mode.reason}` };
  return {
    status: 'ok',
    detail: `${count}, run ${mode.kind === 'bwrap' ? 'with bubblewrap' : 'without isolation'}`,
  };
}
