import type { Kysely } from 'kysely';
import type { Database, JobRunRow } from '../store/schema.ts';

/** What a follow-up run is told about the runs before it. */
export interface RunHistoryEntry {
  seq: number;
  prompt: string;
  status: JobRunRow['status'];
  summary: string | null;
  error: { code: string; message: string } | null;
  /** The base commit the run's diff was taken against; null when it committed nothing. */
  baseCommit: string | null;
}

/** The runs of a job before `seq`, oldest first. */
export async function runHistory(
  db: Kysely<Database>,
  jobId: string,
  beforeSeq: number,
): Promise<RunHistoryEntry[]> {
  if (beforeSeq <= 1) return [];
  const rows = await db
    .selectFrom('job_runs')
    .leftJoin('run_diffs', 'run_diffs.run_id', 'job_runs.id')
    .select([
      'job_runs.seq',
      'job_runs.prompt',
      'job_runs.status',
      'job_runs.summary',
      'job_runs.error_code',
      'job_runs.error_message',
      'run_diffs.base_commit',
    ])
    .where('job_runs.job_id', '=', jobId)
    .where('job_runs.seq', '<', beforeSeq)
    .orderBy('job_runs.seq')
    .execute();
  return rows.map((r) => ({
    seq: r.seq,
    prompt: r.prompt,
    status: r.status,
    summary: r.summary,
    error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
    baseCommit: r.base_commit,
  }));
}
