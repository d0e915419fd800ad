/**
 * Stage 3, agent: the model loop in the agent's own process, over the checkout and the code
 * context. Its repair rounds verify the change as the model finishes (stage 4's checks, fed back
 * to the model: src/agent/verify/); what comes back is the change and the last report.
 */
import type { AgentResult } from '../agent/types.ts';
import type { AgentProcess } from './agent-process.ts';
import type { RunContext } from './run-context.ts';
import type { Workspace } from './stage-checkout.ts';
import type { Resolved } from './stage-resolve.ts';

export async function agentStage(
  ctx: RunContext,
  agent: Pick<AgentProcess, 'run'>,
  resolved: Resolved,
  workspace: Workspace,
): Promise<AgentResult> {
  const { app, project, run, tools } = ctx;
  const result = await agent.run(
    {
      root: workspace.checkout.dir,
      mode: ctx.job.mode,
      project: {
        docsDir: project.settings.docsDir,
        writable: project.settings.writable,
        readOnly: project.settings.readOnly,
      },
      instruction: run.prompt,
      history: run.history.map((h) => ({ prompt: h.prompt, summary: h.summary, error: h.error })),
      budgets: app.config.agent,
      spent: run.spent,
      limits: app.config.agentLimits,
      signal: tools.signal,
      emit: (event) => ctx.record(event.type, event.data),
      onUsage: tools.recordUsage,
      code: workspace.code.description,
      codeReader: workspace.code.reader,
      changes: resolved.codeContext.changes,
      verification: { commands: project.checks, hidden: [app.config.dataDir] },
    },
    ctx.model,
  );
  await workspace.code.close();
  return result;
}
