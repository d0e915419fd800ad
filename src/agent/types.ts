/**
 * The agent's contract with the rest of docwright. The agent knows nothing of
 * HTTP, the database or git: given a directory, a model and an instruction,
 * it edits files in place and reports what it did.
 */
import type { AgentChange, CodeDescription, CodeReader } from './code-types.ts';
import type { CheckReport, Finding } from './verify/types.ts';

/** Stable failure codes of a run (they become the job's `error.code`). */
export type AgentFailureCode =
  | 'model-not-configured'
  | 'model-auth-failed'
  | 'model-unavailable'
  | 'budget-exceeded'
  | 'validation-failed'
  | 'agent-gave-up'
  | 'no-answer'
  | 'memory-limit-exceeded'
  | 'tool-time-limit-exceeded'
  | 'cancelled';

export class AgentFailure extends Error {
  readonly code: AgentFailureCode;
  /** The last verification's report, when the run failed after one (`validation-failed`). */
  readonly checks: CheckReport[] | undefined;
  constructor(
    code: AgentFailureCode,
    message: string,
    options?: { cause?: unknown; checks?: CheckReport[] | undefined },
  ) {
    super(message, options);
    this.name = 'AgentFailure';
    this.code = code;
    this.checks = options?.checks;
  }
}

/** What a project allows the agent to touch. */
export interface AgentProjectSettings {
  /** Documentation directory relative to the repository root ('.' = root). */
  docsDir: string;
  /** Globs (relative to the repository root) of files the agent may write. */
  writable: string[];
  /** Repository-relative paths never written, writable or not (DogBench: the code its change touched). */
  readOnly?: string[];
}

/**
 * Limits of one job, over all its runs (docs/agent.mdx: a follow-up continues from what the job has
 * spent); exceeding one ends the run with `budget-exceeded`.
 */
export interface AgentBudgets {
  /** Model turns (default 40). */
  maxSteps: number;
  /** Input + output tokens (default 400,000). */
  maxTokens: number;
  /** Wall-clock milliseconds the agent runs (default 10 minutes). */
  maxDurationMs: number;
  /** Validation repair rounds after `finish`, per run (default 3). */
  maxRepairRounds: number;
  /** Tool calls run per model turn; the rest are answered with a tool error (default 50). */
  maxToolCallsPerTurn: number;
  /** Transcript events one run may record (default 2,000). */
  maxEvents: number;
}

/** Size caps enforced by the tools. */
export interface AgentLimits {
  /** Largest file read_file will show or a write may produce, in bytes (default 1 MiB). */
  maxFileBytes: number;
  /** Total bytes written over the run (default 5 MiB). */
  maxTotalWriteBytes: number;
  /** Files one run may change (create, modify, delete, move) (default 200). */
  maxChangedFiles: number;
  /** How long one tool call may run before it stops itself, in ms (default 10 s). */
  maxToolMs: number;
}

/** One event of the transcript (the worker stores it as a job event). */
export type AgentEvent =
  | { type: 'agent.text'; data: { step: number; text: string } }
  | { type: 'agent.tool_call'; data: { step: number; tool: string; input: unknown } }
  | { type: 'agent.tool_result'; data: { step: number; tool: string; ok: boolean; output: string } }
  | { type: 'agent.validation'; data: { round: number; ok: boolean; errors: string[] } }
  | { type: 'agent.verification'; data: VerificationEventData }
  | { type: 'agent.retry'; data: { attempt: number; waitMs: number; reason: string } }
  | { type: 'agent.tool_calls_skipped'; data: { step: number; count: number; limit: number } }
  | { type: 'agent.usage'; data: { inputTokens: number; outputTokens: number } };

/** One verification round in the transcript: each check and its findings (bounded). */
export interface VerificationEventData {
  round: number;
  checks: {
    name: string;
    skipped?: string;
    counts?: Record<string, number>;
    notes?: string[];
    findings: (Pick<Finding, 'path' | 'line' | 'message' | 'level' | 'rule'> & { preexisting: boolean })[];
    /** Findings past the ones recorded. */
    more?: number;
  }[];
}

export interface AgentHistoryEntry {
  prompt: string;
  summary: string | null;
  error: { code: string; message: string } | null;
}

/**
 * `edit` (default): the agent edits the docs and calls finish. `ask`: it answers a question with
 * the reading tools and `answer`, and changes nothing (docs/questions.mdx).
 */
export type AgentMode = 'edit' | 'ask';

/** One cited range of lines: a path as read_file reads it, lines 1-based and inclusive. */
export interface AgentCitation {
  path: string;
  startLine: number;
  endLine: number;
}

/** What the answer tool leaves: the answer and its citations, each checked against the files. */
export interface AgentAnswer {
  text: string;
  citations: AgentCitation[];
}

export interface AgentInput {
  /** Absolute path of the checkout the agent edits. */
  root: string;
  /** Default `edit`. */
  mode?: AgentMode;
  project: AgentProjectSettings;
  instruction: string;
  /** Earlier runs of the same job, oldest first. */
  history: AgentHistoryEntry[];
  budgets: AgentBudgets;
  /** What earlier runs of the job spent against `budgets` (none: a new job). */
  spent?: { steps: number; tokens: number; durationMs: number };
  limits: AgentLimits;
  signal: AbortSignal;
  emit: (event: AgentEvent) => Promise<void> | void;
  /** Told each model turn's tokens as soon as the turn is answered (usage accrues as it is spent). */
  onUsage?: (usage: { inputTokens: number; outputTokens: number }) => Promise<void> | void;
  /**
   * The code the run may read, read-only (docs/code-context.mdx): which repositories `codeReader` serves.
   * Serializable; the agent's process gets a reader that asks its parent (src/pipeline/code-ipc.ts).
   */
  code?: CodeDescription;
  /** Answers code reads for `code.repositories` (not serializable: stays in the process that made it). */
  codeReader?: CodeReader;
  /** The code changes the job documents, resolved by the worker, in the job's order (default none). */
  changes?: AgentChange[];
  /** What verification applies besides the built-in checks (docs/verification.mdx); default none. */
  verification?: VerificationSettings;
}

/** The project's verification settings, as the agent's process gets them (serializable). */
export interface VerificationSettings {
  /** Check commands set by an operator (SPEC §19), run in the checkout in this order. */
  commands: string[];
  /** Folders a command may not read (the data directory), besides the service's home. */
  hidden?: string[];
}

export interface AgentResult {
  title: string;
  summary: string;
  /** Repository-relative paths changed (created, modified, deleted, or either end of a move). */
  changedFiles: string[];
  usage: { inputTokens: number; outputTokens: number };
  /** The last verification's report (AgentJob `checks`). */
  checks: CheckReport[];
  /** An ask run's answer (then `title` and `summary` are empty and nothing changed). */
  answer?: AgentAnswer;
}

/** A tool error goes back to the model as the tool's result; it never ends the run. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

export const DEFAULT_BUDGETS: AgentBudgets = {
  maxSteps: 40,
  maxTokens: 400_000,
  maxDurationMs: 10 * 60_000,
  maxRepairRounds: 3,
  maxToolCallsPerTurn: 50,
  maxEvents: 2_000,
};

export const DEFAULT_LIMITS: AgentLimits = {
  maxFileBytes: 1024 * 1024,
  maxTotalWriteBytes: 5 * 1024 * 1024,
  maxChangedFiles: 200,
  maxToolMs: 10_000,
};
