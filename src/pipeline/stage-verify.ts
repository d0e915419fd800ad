/**
 * Stage 4, verify: whether the agent's change may be published. The docs' own checks ran in the
 * agent's repair rounds (a change that still fails them ended the run there, with its report);
 * what remains is the gate no model may talk its way past: a change that would commit a secret
 * docwright knows is not pushed (the files are named, never the secret).
 */
import type { AgentResult } from '../agent/types.ts';
import { failed, type RunContext } from './run-context.ts';
import { filesAddingSecrets } from './run-secrets.ts';
import type { RunOutcome } from './runner.ts';
import type { Workspace } from './stage-checkout.ts';

/** undefined when the change may be published; otherwise the run's outcome. */
export async function verifyStage(
  ctx: RunContext,
  workspace: Workspace,
  result: AgentResult,
): Promise<RunOutcome | undefined> {
  const leaking = await filesAddingSecrets(workspace.checkout, result.changedFiles, ctx.runSecrets, {
    env: workspace.env,
    signal: ctx.tools.signal,
  });
  if (leaking.length === 0) return undefined;
  return failed(
    'secret-in-change',
    `the change would commit a secret docwright knows (a credential, key or webhook secret) in ${leaking.join(', ')}; nothing was pushed. Keep secrets out of the instruction and the pages the agent reads, or rotate the secret`,
  );
}
