import type { AgentJob } from '../jobs/agent-job.ts';
import type { ChangeRequest } from '../jobs/changes.ts';
import type { RunOutcome } from '../jobs/run-outcome.ts';
import type { RunHistoryEntry } from '../jobs/runs.ts';
import type { JobSpending, TokenUsage } from '../jobs/usage.ts';

export type { RunOutcome };

/** The job a run belongs to, as the runner sees it. */
export interface RunnableJob extends AgentJob {
  projectId: string;
  /** Whether the request asked for a draft pull request (null: the project's setting). */
  draft: boolean | null;
}

/** One run: the instruction to carry out and what earlier runs of the job did. */
export interface RunnableRun {
  id: string;
  /** 1 for the job's first prompt, then 2, 3… for follow-ups. */
  seq: number;
  prompt: string;
  /** 1 on the first claim; more after a worker was lost. */
  attempt: number;
  history: RunHistoryEntry[];
  /** What the job spent before this attempt (its budgets are per job: docs/agent.mdx). */
  spent: JobSpending;
  /** The code changes the run documents, as requested; the runner resolves them before the model starts. */
  changes: ChangeRequest[];
}

/** Records one step of the run in the job's transcript (written only while the run is still ours). */
export type EmitStep = (type: string, data?: unknown) => Promise<void>;

/** Records one model turn's tokens as they are spent (on the run, the job and the project's month). */
export type RecordUsage = (usage: TokenUsage) => Promise<void>;

/**
 * Hands the worker work to do once the run's outcome is recorded (e.g. removing a checkout),
 * so that callers see the result without waiting for it. The worker runs it whatever the
 * outcome, abort included, before the run's slot is free and before a graceful stop ends.
 */
export type DeferTask = (task: () => Promise<void>) => void;

/** What the worker gives a run besides the job and the run itself. */
export interface RunTools {
  /** Aborts on cancellation, a lost lease, the time limit or shutdown; the runner must stop promptly. */
  signal: AbortSignal;
  /** Records a step in the job's transcript. */
  emit: EmitStep;
  /** Work for after the outcome is recorded (removing the checkout). */
  defer: DeferTask;
  /** Records model tokens as they are spent. */
  recordUsage: RecordUsage;
  /** The worker process's folder for run checkouts (0700, removed when the process is gone). */
  tmpDir: string;
}

/**
 * The one function the worker calls per run. It must stop promptly when `tools.signal`
 * aborts; what it returns then is ignored.
 */
export interface Runner {
  (job: RunnableJob, run: RunnableRun, tools: RunTools): Promise<RunOutcome>;
  /** Releases what the runner keeps between runs (a spare agent process); the worker calls it when it stops. */
  close?: () => void;
}
