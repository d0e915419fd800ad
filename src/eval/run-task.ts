/**
 * One task through the real pipeline: its docs repository (and code change) as temporary local
 * git repositories, a project on the `local` host, a job created through the job service and run
 * by the worker like any other (same agent, tools, validation, commit and push), then the diff of
 * the pushed branch against the base, the checks, the judge and the score.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import parseDiff from 'parse-diff';
import type { Model } from '../agent/model-resolution.ts';
import { detectSite } from '../agent/site/detect.ts';
import type { App } from '../app.ts';
import { git } from '../git/git.ts';
import type { AgentJob } from '../jobs/agent-job.ts';
import { latestDiff } from '../jobs/diffs.ts';
import type { RunDiffRow } from '../store/schema.ts';
import { type CheckOutcome, evaluateCheck, type JobResult } from './checks.ts';
import { CODE_REPOSITORY, changeMessage, jobRequest } from './code-change.ts';
import { type DogBenchItemReport, scoreDogBenchItem } from './dogbench-item.ts';
import { dogbenchItemRow } from './dogbench-score.ts';
import { judge } from './judge.ts';
import { createCodeRepository, createRepository } from './repositories.ts';
import type { Criterion, Rubric } from './rubric.ts';
import { type Expected, type JudgedCheck, type Outcome, p0Clean, taskScore } from './score.ts';
import type { Check, InvalidTask, Task } from './task.ts';

/** How often a running job is looked at. */
const POLL_MS = 100;

/**
 * Job failures that say nothing about the model's work: the model could not be reached or used,
 * or docwright itself failed. A task that ends so "could not run" (exit status 1).
 */
const NOT_THE_MODELS_FAULT = new Set([
  'model-not-configured',
  'model-auth-failed',
  'model-unavailable',
  'internal-error',
  'worker-lost',
  'cancelled',
]);

/** A check or a judged criterion, with its result. */
export type CheckReport =
  | ({ kind: 'check'; check: Check } & CheckOutcome)
  | ({ kind: 'judge'; criterion: Criterion } & CheckOutcome);

export interface TaskReport {
  id: string;
  origin: string;
  expected: Expected | null;
  outcome: Outcome | 'invalid';
  score: number | null;
  p0Clean: boolean;
  checks: CheckReport[];
  jobId: string | null;
  error: string | null;
  /** True when the task did not run to a result the model is answerable for (exit status 1). */
  couldNotRun: boolean;
  tokens: { input: number; output: number };
  seconds: number;
  /** The agent's summary. */
  summary: string | null;
  /** The job's diff as the pipeline stored it (1 MiB at most), for the report. */
  diff: RunDiffRow | undefined;
  /** A DogBench item's row, verdicts and quotes (`--dogbench`); its `overall` is `score`. */
  dogbench?: DogBenchItemReport;
}

export interface TaskContext {
  app: App;
  /** The model the jobs use (`provider/model`). */
  model: string;
  judge: Model | null;
  /** The folder the task's repositories are made in. */
  dir: string;
  signal: AbortSignal;
}

const emptyReport = (task: { id: string; origin: string }): TaskReport => ({
  id: task.id,
  origin: task.origin,
  expected: null,
  outcome: 'invalid',
  score: null,
  p0Clean: false,
  checks: [],
  jobId: null,
  error: null,
  couldNotRun: false,
  tokens: { input: 0, output: 0 },
  seconds: 0,
  summary: null,
  diff: undefined,
});

/** A task that did not load: it does not run, and makes the exit status 1. */
export const invalidReport = (task: InvalidTask): TaskReport => ({
  ...emptyReport(task),
  expected: task.expected,
  error: task.error,
  couldNotRun: true,
});

async function waitForEnd(
  app: App,
  projectId: string,
  jobId: string,
  signal: AbortSignal,
): Promise<AgentJob> {
  for (;;) {
    const job = await app.jobs.get(projectId, jobId);
    if (job.status !== 'active') return job;
    await sleep(POLL_MS, undefined, { signal });
  }
}

/** What the job changed between `base` and `head` of the docs repository. */
async function changesOf(repo: string, base: string, head: string, signal: AbortSignal) {
  const options = { cwd: repo, signal };
  const status = await git(['diff', '--name-status', '-z', '--find-renames', base, head, '--'], options);
  const fields = status.split('\0').filter(Boolean);
  const changed: string[] = [];
  const deleted: string[] = [];
  for (let i = 0; i < fields.length; ) {
    const code = fields[i++]!;
    if (code.startsWith('R') || code.startsWith('C')) {
      const [from, to] = [fields[i++]!, fields[i++]!];
      changed.push(from, to);
      if (code.startsWith('R')) deleted.push(from);
    } else {
      const file = fields[i++]!;
      changed.push(file);
      if (code === 'D') deleted.push(file);
    }
  }
  const diff = await git(
    ['diff', '--no-color', '--no-ext-diff', '--find-renames', base, head, '--'],
    options,
  );
  const addedLines = parseDiff(diff)
    .flatMap((file) => file.chunks.flatMap((chunk) => chunk.changes))
    .filter((change) => change.type === 'add')
    .map((change) => change.content.slice(1))
    .join('\n');
  return { changed, deleted, diff, addedLines };
}

const judgedCheck = (report: CheckReport): JudgedCheck => {
  const { priority, scoring } = report.kind === 'check' ? report.check : report.criterion;
  const points = report.kind === 'check' ? report.check.points : undefined;
  return { priority, scoring, passed: report.passed, ...(points !== undefined && { points }) };
};

/** The rubric's criteria, rated by the judge on the job's diff. */
async function judgeCriteria(
  judgeModel: Model,
  rubric: Rubric,
  outcome: Outcome,
  input: { instruction: string; diff: string; signal: AbortSignal },
): Promise<CheckReport[]> {
  if (outcome !== 'patch') {
    // Nothing was written: no requirement is met, and nothing written breaks a deduction.
    return rubric.criteria.map((criterion) => ({
      kind: 'judge',
      criterion,
      passed: criterion.scoring === 'deduction',
      detail: 'no file was changed',
    }));
  }
  const { verdicts } = await judge(judgeModel, { ...input, guidance: rubric.guidance }, rubric.criteria);
  return rubric.criteria.map((criterion, i) => {
    const verdict = verdicts[i]!;
    return {
      kind: 'judge',
      criterion,
      passed: verdict.passed,
      detail: verdict.error ? `no verdict: ${verdict.error}` : verdict.reason,
    };
  });
}

/** The row of a DogBench item whose job failed or that could not run. */
const dogbenchFailure = (id: string, expected: Expected): DogBenchItemReport => ({
  ...dogbenchItemRow(id, expected === 'patch' ? 'patch' : 'abstain', 'failed', 0),
  verdicts: null,
  judgeSummary: null,
  numeric: null,
  judgeError: null,
  judgeTokens: { input: 0, output: 0 },
});

const notEvaluated = (checks: Check[]): CheckReport[] =>
  checks.map((check) => ({ kind: 'check', check, passed: false, detail: 'not evaluated: the job failed' }));

export async function runTask(context: TaskContext, task: Task): Promise<TaskReport> {
  const { app, signal } = context;
  const started = Date.now();
  const report: TaskReport = { ...emptyReport(task), expected: task.expected, outcome: 'failed', score: 0 };
  try {
    const docsRepo = path.join(context.dir, 'docs');
    const base = await createRepository(docsRepo, task.docs, 'Base', signal);
    const baseSite = await detectSite(docsRepo, task.docsDir);
    const code = task.code
      ? await createCodeRepository(
          path.join(context.dir, 'code'),
          task.code,
          changeMessage(task.change),
          signal,
        )
      : null;
    const project = await app.projects.create({
      name: task.id,
      repository: docsRepo,
      docsDir: task.docsDir,
      model: context.model,
      ...(task.writable && { writable: task.writable }),
      ...(task.readOnly && { readOnly: task.readOnly }),
    });
    if (code) await app.contextRepositories.add(project.id, { name: CODE_REPOSITORY, repository: code.dir });
    const { job: created } = await app.jobs.create(project.id, jobRequest(task.instruction, code));
    report.jobId = created.id;
    const job = await waitForEnd(app, project.id, report.jobId, signal);
    report.tokens = { input: job.usage?.inputTokens ?? 0, output: job.usage?.outputTokens ?? 0 };
    report.summary = job.summary;
    if (job.status !== 'completed') {
      report.error = job.error ? `${job.error.code}: ${job.error.message}` : `the job ended ${job.status}`;
      report.couldNotRun = !job.error || NOT_THE_MODELS_FAULT.has(job.error.code);
      report.checks = notEvaluated(task.checks);
      return report;
    }
    // The pushed branch is the job's head; without one, the job left the base as it was.
    if (job.branch) await git(['checkout', '--quiet', '--detach', job.branch], { cwd: docsRepo, signal });
    const head = (await git(['rev-parse', 'HEAD'], { cwd: docsRepo, signal })).trim();
    const changes = await changesOf(docsRepo, base, head, signal);
    const files = (await git(['ls-files', '-z'], { cwd: docsRepo, signal })).split('\0').filter(Boolean);
    const result: JobResult = { root: docsRepo, docsDir: task.docsDir, files, baseSite, ...changes };
    report.outcome = changes.changed.length > 0 ? 'patch' : 'no-changes';
    report.diff = await latestDiff(app.store.db, report.jobId);
    if (task.dogbench) {
      const job = { status: 'completed' as const, changedFiles: changes.changed.length, patch: changes.diff };
      report.dogbench = await scoreDogBenchItem(
        { ...task, dogbench: task.dogbench },
        job,
        context.judge,
        signal,
      );
      return report;
    }
    for (const check of task.checks) {
      report.checks.push({ kind: 'check', check, ...(await evaluateCheck(check, result)) });
    }
    // A no-changes task's score does not depend on its checks: the judge is not asked.
    if (context.judge && task.rubric && task.expected === 'patch') {
      const judged = await judgeCriteria(context.judge, task.rubric, report.outcome, {
        // The judge reads the instruction with the code change's title and description.
        instruction: task.change
          ? `${task.instruction}\n\nCode change: ${changeMessage(task.change)}`
          : task.instruction,
        diff: changes.diff,
        signal,
      });
      report.checks.push(...judged);
    }
    return report;
  } catch (error) {
    if (signal.aborted) throw error;
    report.error = `the task could not run: ${error instanceof Error ? error.message : String(error)}`;
    report.couldNotRun = true;
    report.checks = notEvaluated(task.checks);
    return report;
  } finally {
    const outcome = report.outcome as Outcome;
    const judged = report.checks.map(judgedCheck);
    report.score = taskScore(task.expected, outcome, judged);
    report.p0Clean = p0Clean(task.expected, outcome, judged);
    if (task.dogbench) {
      // A job that failed, or an item that could not run, is an operational failure: 0.
      report.dogbench ??= dogbenchFailure(task.id, task.expected);
      report.score = report.dogbench.overall;
      report.p0Clean = report.dogbench.decision_correct && report.dogbench.mergeable;
    }
    report.seconds = Math.round((Date.now() - started) / 100) / 10;
  }
}
