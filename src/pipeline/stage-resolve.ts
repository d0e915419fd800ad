/**
 * Stage 1, resolve: the code changes the run documents, fetched through their hosts, and the
 * code context the agent reads (docs/code-context.mdx). A change the host cannot give ends the
 * run here, before any checkout or model call.
 */
import type { AgentChange } from '../agent/change.ts';
import { type ResolvedJobChange, resolvedJobChange } from '../jobs/changes.ts';
import { resolveChanges } from './change-resolution.ts';
import { codeContextOf, type ResolveCodeContext, type RunCodeContext } from './run-code.ts';
import type { RunContext } from './run-context.ts';

export interface Resolved {
  /** The job's changes as their hosts gave them, in the job's order. */
  changes: AgentChange[];
  /** The AgentJob's view of them. */
  jobChanges: ResolvedJobChange[];
  codeContext: RunCodeContext;
}

export async function resolveStage(ctx: RunContext, override?: ResolveCodeContext): Promise<Resolved> {
  const { signal } = ctx.tools;
  const changes = await resolveChanges(ctx.run.changes, ctx.hostOf, signal);
  const jobChanges = changes.map(resolvedJobChange);
  if (changes.length > 0) await ctx.record('changes.resolved', { changes: jobChanges });
  const contextHosts = new Map(ctx.contexts.map((c) => [c.name, ctx.hostOf(c.name)!]));
  const codeContext = override
    ? await override(ctx.job, ctx.run, signal)
    : await codeContextOf(ctx.contexts, contextHosts, changes, signal, ctx.gitOptions);
  return { changes, jobChanges, codeContext };
}
