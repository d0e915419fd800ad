/**
 * The agent's contract with the rest of docwright. The agent knows nothing of
 * HTTP, the database or git: given a directory, a model and an instruction,
 * it edits files in place and reports what it did.
 */
import type { z } from 'zod';

/** Stable failure codes of a run (they become the job's `error.code`). */
export type AgentFailureCode =
  | 'model-not-configured'
  | 'model-auth-failed'
  | 'model-unavailable'
  | 'budget-exceeded'
  | 'validation-failed'
  | 'agent-gave-up'
  | 'cancelled';

export class AgentFailure extends Error {
  readonly code: AgentFailureCode;
  constructor(code: AgentFailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AgentFailure';
    this.code = code;
  }
}

/** What a project allows the agent to touch. */
export interface AgentProjectSettings {
  /** Documentation directory relative to the repository root ('.' = root). */
  docsDir: string;
  /** Globs (relative to the repository root) of files the agent may write. */
  writable: string[];
}

/** Limits of one run; exceeding one ends it with `budget-exceeded`. */
export interface AgentBudgets {
  /** Model turns (default 40). */
  maxSteps: number;
  /** Input + output tokens over the run (default 400,000). */
  maxTokens: number;
  /** Wall-clock milliseconds (default 10 minutes). */
  maxDurationMs: number;
  /** Validation repair rounds after `finish` (default 3). */
  maxRepairRounds: number;
}

/** Size caps enforced by the tools. */
export interface AgentLimits {
  /** Largest file read_file will show or a write may produce, in bytes (default 1 MiB). */
  maxFileBytes: number;
  /** Total bytes written over the run (default 5 MiB). */
  maxTotalWriteBytes: number;
}

/** One event of the transcript (the worker stores it as a job event). */
export type AgentEvent =
  | { type: 'agent.text'; data: { step: number; text: string } }
  | { type: 'agent.tool_call'; data: { step: number; tool: string; input: unknown } }
  | { type: 'agent.tool_result'; data: { step: number; tool: string; ok: boolean; output: string } }
  | { type: 'agent.validation'; data: { round: number; ok: boolean; errors: string[] } }
  | { type: 'agent.retry'; data: { attempt: number; waitMs: number; reason: string } }
  | { type: 'agent.usage'; data: { inputTokens: number; outputTokens: number } };

export interface AgentHistoryEntry {
  prompt: string;
  summary: string | null;
  error: { code: string; message: string } | null;
}

export interface AgentInput {
  /** Absolute path of the checkout the agent edits. */
  root: string;
  project: AgentProjectSettings;
  instruction: string;
  /** Earlier runs of the same job, oldest first. */
  history: AgentHistoryEntry[];
  budgets: AgentBudgets;
  limits: AgentLimits;
  signal: AbortSignal;
  emit: (event: AgentEvent) => Promise<void> | void;
}

export interface AgentResult {
  title: string;
  summary: string;
  /** Repository-relative paths changed (created, modified, deleted, or either end of a move). */
  changedFiles: string[];
  usage: { inputTokens: number; outputTokens: number };
}

/** A tool error goes back to the model as the tool's result; it never ends the run. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

/** One of the eight tools of SPEC §7, independent of any model SDK. */
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
  /** Set by the path guard and workspace module (src/agent/workspace.ts). */
  workspace: import('./workspace.ts').Workspace;
}

export const DEFAULT_BUDGETS: AgentBudgets = {
  maxSteps: 40,
  maxTokens: 400_000,
  maxDurationMs: 10 * 60_000,
  maxRepairRounds: 3,
};

export const DEFAULT_LIMITS: AgentLimits = {
  maxFileBytes: 1024 * 1024,
  maxTotalWriteBytes: 5 * 1024 * 1024,
};
