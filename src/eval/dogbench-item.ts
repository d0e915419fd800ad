/**
 * One DogBench item's score once its job has ended (SPEC §18 `--dogbench`): the decision the job
 * made (a patch, or none), whether it is the expected one, and — for a correct patch — DogBench's
 * judge on the patch and DogBench's formula on its verdicts.
 */
import type { Model } from '../agent/model-resolution.ts';
import { judgeDogBenchItem } from './dogbench-judge.ts';
import {
  type DogBenchItemScore,
  type DogBenchNumeric,
  type DogBenchVerdict,
  dogbenchItemRow,
  dogbenchNumericScore,
} from './dogbench-score.ts';
import type { Task } from './task.ts';

export interface DogBenchItemReport extends DogBenchItemScore {
  /** The judge's verdicts with their quotes, when the patch was judged. */
  verdicts: DogBenchVerdict[] | null;
  /** The judge's summary of the patch. */
  judgeSummary: string | null;
  numeric: DogBenchNumeric | null;
  /** Why the item could not be judged (it then scores 0). */
  judgeError: string | null;
  judgeTokens: { input: number; output: number };
}

export async function scoreDogBenchItem(
  task: Task & { dogbench: NonNullable<Task['dogbench']> },
  job: { status: 'completed' | 'failed'; changedFiles: number; patch: string },
  judge: Model | null,
  signal: AbortSignal,
): Promise<DogBenchItemReport> {
  const expected = task.expected === 'patch' ? 'patch' : 'abstain';
  const row = dogbenchItemRow(task.id, expected, job.status, job.changedFiles);
  const report: DogBenchItemReport = {
    ...row,
    verdicts: null,
    judgeSummary: null,
    numeric: null,
    judgeError: null,
    judgeTokens: { input: 0, output: 0 },
  };
  if (!row.decision_correct || expected !== 'patch') return report;
  const { rubric, criteria } = task.dogbench;
  if (!rubric || !criteria) {
    report.judgeError = 'the item has no rubric: it has no scorable criterion';
    return report;
  }
  if (!judge) {
    report.judgeError = 'no judge: DogBench scores a patch with its judge (--judge provider/model)';
    return report;
  }
  try {
    const judged = await judgeDogBenchItem(judge, {
      itemId: task.id,
      rubric,
      criteria,
      patch: job.patch,
      signal,
    });
    const numeric = dogbenchNumericScore(judged.verdicts, criteria);
    return {
      ...report,
      overall: numeric.overall,
      mergeable: numeric.mergeable,
      blocking_p0: numeric.blocking_p0,
      verdicts: judged.verdicts,
      judgeSummary: judged.summary,
      numeric,
      judgeTokens: judged.usage,
    };
  } catch (error) {
    if (signal.aborted) throw error;
    report.judgeError = error instanceof Error ? error.message : String(error);
    return report;
  }
}
