import type { Insertable, Kysely } from 'kysely';
import { newRunId } from '../ids.ts';
import { compileInsert } from '../store/compiled-insert.ts';
import type { Database, JobRunRow, JobRunTable } from '../store/schema.ts';
import type { ChangeRequest } from './changes.ts';

/** A run whose values only stand in for parameters (see compileInsert). */
const RUN_TEMPLATE: Insertable<JobRunTable> = {
  id: '',
  job_id: '',
  project_id: '',
  seq: 0,
  prompt: '',
  status: 'queued',
  lease_owner: null,
  lease_expires_at: null,
  summary: null,
  error_code: null,
  error_message: null,
  created_at: '',
  started_at: null,
  ended_at: null,
  changes: null,
};

/**
 * Queues a run (the first prompt or a follow-up) for the worker, in the caller's transaction;
 * returns its id. Made once per database: its INSERT is compiled once.
 */
export function runQueue(db: Kysely<Database>) {
  const insertRun = compileInsert(db, 'job_runs', RUN_TEMPLATE);
  return async (
    trx: Kysely<Database>,
    run: {
      jobId: string;
      projectId: string;
      seq: number;
      prompt: string;
      at: Date;
      /** The code changes the run documents (src/jobs/changes.ts). */
      changes: readonly ChangeRequest[];
    },
  ): Promise<string> => {
    const id = newRunId();
    await trx.executeQuery(
      insertRun({
        ...RUN_TEMPLATE,
        id,
        job_id: run.jobId,
        project_id: run.projectId,
        seq: run.seq,
        prompt: run.prompt,
        created_at: run.at.toISOString(),
        changes: run.changes.length > 0 ? JSON.stringify(run.changes) : null,
      }),
    );
    return id;
  };
}

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
