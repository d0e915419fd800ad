/** The contract of the agent's tools (one file each in this folder). */
import type { z } from 'zod';
import type { AgentChange } from '../change.ts';
import type { Workspace } from '../workspace.ts';

/** One of the tools of docs/agent.mdx and docs/code-context.mdx, independent of any model SDK. */
export interface AgentTool<Input = unknown> {
  name: string;
  description: string;
  parameters: z.ZodType<Input>;
  /** Returns the text shown to the model; throws ToolError for a recoverable mistake. */
  execute(input: Input, context: ToolContext): Promise<string>;
}

export interface ToolContext {
  root: string;
  signal: AbortSignal;
  /** When the call must stop (epoch ms); set by runTool from `limits.maxToolMs`. */
  deadline?: number;
  /** The run's workspace: every path goes through its guard (src/agent/workspace.ts). */
  workspace: Workspace;
  /** The code changes the job documents (read_change), in the job's order. */
  changes?: readonly AgentChange[];
}
