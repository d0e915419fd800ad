import type { AgentJob } from '../jobs/job.ts';
import type { RunHistoryEntry } from '../jobs/runs.ts';
import type { RunOutcome } from '../jobs/transitions.ts';

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
}

/** Records one step of the run in the job's transcript (written only while the run is still ours). */
export type EmitStep = (type: string, data?: unknown) => Promise<void>;

/**
 * Hands the worker work to do once the run's outcome is recorded (e.g. removing a checkout),
 * so that callers see the result without waiting for it. The worker runs it whatever the
 * outcome, abort included, before the run's slot is free and before a graceful stop ends.
 */
export type DeferTask = (task: () => Promise<void>) => void;

/**
 * The one function the worker calls per run. It must stop promptly when
 * `signal` aborts (cancellation, lost lease, time limit, shutdown); what it
 * returns then is ignored.
 */
export type Runner = (
  job: RunnableJob,
  run: RunnableRun,
  signal: AbortSignal,
  emit: EmitStep,
  defer: DeferTask,
) => Promise<RunOutcome>;

/**
 * The runner until the agent and git pipeline are wired in: it never fakes
 * success. Without a model the job fails with `model-not-configured`.
 */
export const unavailableAgentRunner: Runner = async (job) => {
  if (!job.model) {
    return {
      status: 'failed',
      error: {
        code: 'model-not-configured',
        message:
          'no model is configured: set the project model (docwright project update --model) or DOCWRIGHT_MODEL',
      },
    };
  }
  return {
    status: 'failed',
    error: { code: 'agent-unavailable', message: 'this docwright build has no docs agent to run the job' },
  };
};
