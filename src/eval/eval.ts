/**
 * `docwright eval` (docs/evaluation.mdx): runs a suite's tasks through the real pipeline — a docwright App
 * on a temporary SQLite data directory, a worker with the run pipeline, a project and a job per
 * task — scores them, and removes everything it made, on failure and cancellation too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { Model } from '../agent/model-resolution.ts';
import { openApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { createPipeline } from '../pipeline/pipeline.ts';
import { Worker } from '../worker/worker.ts';
import { type DogBenchSummary, dogbenchSummary } from './dogbench-score.ts';
import { invalidReport, runTask, type TaskReport } from './run-task.ts';
import { type Summary, summarize } from './score.ts';
import type { Suite } from './suite.ts';
import { isInvalid } from './task.ts';

export interface EvalOptions {
  suite: Suite;
  /** The model the agent uses, `provider/model`. */
  model: string;
  /** The judge model (`provider/model` and resolved); null without --judge. */
  judge: { id: string; model: Model } | null;
  /** Tasks run at once. */
  concurrency: number;
  /** Where keys, base URLs and budgets are read from (the server's variables). */
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** Told when a task starts and when it ends. */
  onTaskStart?: (id: string) => void;
  onTaskEnd?: (report: TaskReport) => void;
}

export interface EvalRun {
  suite: string;
  model: string;
  judge: string | null;
  /** Whose formula scored it (docs/evaluation.mdx). */
  scoring: 'docwright' | 'dogbench';
  tasks: TaskReport[];
  summary: Summary;
  /** DogBench's summary, in its names, when `scoring` is `dogbench`. */
  dogbench: DogBenchSummary | null;
}

/**
 * Variables that would point the evaluation at the user's own service: its database, data and
 * mirrors, secret key, first account. The evaluation keeps everything in its temporary folder.
 */
const SERVICE_VARIABLES =
  /^(DATABASE_URL|DOCWRIGHT_(DATA_DIR|DATABASE_SCHEMA|SECRET_KEY|MIRROR_DIR|ADMIN_EMAIL|ADMIN_PASSWORD|WORKER_CONCURRENCY|PROJECT_CONCURRENCY|MODEL))$/;

export async function runEval(options: EvalOptions): Promise<EvalRun> {
  const started = Date.now();
  const workDir = await mkdtemp(path.join(tmpdir(), 'docwright-eval-'));
  try {
    const env = Object.fromEntries(
      Object.entries(options.env).filter(([name]) => !SERVICE_VARIABLES.test(name)),
    );
    const config = loadConfig({
      ...env,
      DOCWRIGHT_DATA_DIR: path.join(workDir, 'data'),
      DOCWRIGHT_WORKER_CONCURRENCY: String(options.concurrency),
      DOCWRIGHT_PROJECT_CONCURRENCY: String(options.concurrency),
      // Each task's project runs one job: no mirror is worth keeping after it.
      DOCWRIGHT_MIRROR_MAX_MB: '0',
    });
    // The worker's log would tear the progress line: only errors, on stderr.
    const logger = createLogger(options.env.DOCWRIGHT_LOG_LEVEL ?? 'error', pino.destination(2));
    const app = await openApp(config, { logger });
    const worker = new Worker(app, { runner: createPipeline(app), pollMs: 100 });
    worker.start();
    try {
      const reports = await runAll(options, async (task, index) => {
        const dir = path.join(workDir, 'tasks', `${index}`);
        return runTask(
          { app, model: options.model, judge: options.judge?.model ?? null, dir, signal: options.signal },
          task,
        );
      });
      const scoring = options.suite.scoring ?? 'docwright';
      return {
        suite: options.suite.name,
        model: options.model,
        judge: options.judge?.id ?? null,
        scoring,
        tasks: reports,
        summary: summarize(reports, (Date.now() - started) / 1000),
        dogbench: scoring === 'dogbench' ? dogbenchRunSummary(reports) : null,
      };
    } finally {
      // Cancelled: running jobs are aborted at once (their checkouts are removed as they stop).
      await worker.stop(options.signal.aborted ? 0 : undefined);
      await app.close();
    }
  } finally {
    await rm(workDir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** Runs the valid tasks, `concurrency` at a time, keeping the suite's order in the result. */
async function runAll(
  options: EvalOptions,
  run: (task: Parameters<typeof runTask>[1], index: number) => Promise<TaskReport>,
): Promise<TaskReport[]> {
  const { tasks } = options.suite;
  const reports: TaskReport[] = new Array(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length && !options.signal.aborted) {
      const index = next++;
      const task = tasks[index]!;
      let report: TaskReport;
      if (isInvalid(task)) report = invalidReport(task);
      else {
        options.onTaskStart?.(task.id);
        report = await run(task, index);
      }
      reports[index] = report;
      options.onTaskEnd?.(report);
    }
  };
  // Every lane has stopped before this returns, failed or not: nothing still writes into the
  // folder the caller is about to remove.
  const lanes = await Promise.allSettled(
    Array.from({ length: Math.min(options.concurrency, tasks.length) }, lane),
  );
  options.signal.throwIfAborted();
  for (const result of lanes) if (result.status === 'rejected') throw result.reason;
  return reports;
}

/**
 * DogBench's summary of the items: an item that did not load is missing from the set, one that
 * could not run scores 0 as an operational failure, and either leaves the set incomplete (no
 * composite).
 */
function dogbenchRunSummary(reports: TaskReport[]): DogBenchSummary {
  const rows = reports.flatMap((r) => (r.dogbench ? [r.dogbench] : []));
  return dogbenchSummary(
    rows,
    reports.every((r) => r.dogbench !== undefined && !r.couldNotRun),
  );
}

/** A DogBench item in the `--json` document, in DogBench's names. */
const dogbenchTask = (t: TaskReport) => ({
  instance_id: t.id,
  expected_outcome: t.dogbench?.expected_outcome ?? (t.expected === 'no-changes' ? 'abstain' : 'patch'),
  status: t.dogbench?.status ?? 'failed',
  decision: t.dogbench?.decision ?? null,
  decision_correct: t.dogbench?.decision_correct ?? false,
  overall: t.dogbench?.overall ?? 0,
  mergeable: t.dogbench?.mergeable ?? false,
  blocking_p0: t.dogbench?.blocking_p0 ?? [],
  criteria: t.dogbench?.verdicts ?? null,
  judge_summary: t.dogbench?.judgeSummary ?? null,
  judge_error: t.dogbench?.judgeError ?? null,
  jobId: t.jobId,
  error: t.error,
  tokens: t.tokens,
  seconds: t.seconds,
});

/** The `--json` document of docs/evaluation.mdx. */
export function evalDocument(run: EvalRun) {
  if (run.scoring === 'dogbench') {
    return {
      suite: run.suite,
      model: run.model,
      judge: run.judge,
      scoring: 'dogbench' as const,
      tasks: run.tasks.map(dogbenchTask),
      summary: { ...run.dogbench, tokens: run.summary.tokens, seconds: run.summary.seconds },
    };
  }
  return {
    suite: run.suite,
    model: run.model,
    scoring: 'docwright' as const,
    tasks: run.tasks.map((t) => ({
      id: t.id,
      expected: t.expected,
      outcome: t.outcome,
      score: t.score,
      p0Clean: t.p0Clean,
      checks: t.checks.map((c) =>
        c.kind === 'check'
          ? { ...c.check, passed: c.passed }
          : {
              type: 'judge',
              criterion: c.criterion.text,
              priority: c.criterion.priority,
              scoring: c.criterion.scoring,
              passed: c.passed,
            },
      ),
      jobId: t.jobId,
      error: t.error,
      tokens: t.tokens,
      seconds: t.seconds,
    })),
    summary: run.summary,
  };
}
