import type { Kysely } from 'kysely';
import { newRunId } from '../../ids.ts';
import type { Database } from '../../store/schema.ts';
import type { ChangeRequest } from '../changes.ts';
import { insertRunStatement, RUN_TEMPLATE } from './sql/insert-run.ts';

/**
 * Queues a run (the first prompt or a follow-up) for the worker, in the caller's transaction;
 * returns its id. Made once per database: its INSERT is compiled once.
 */
export function runQueue(db: Kysely<Database>) {
  const insertRun = insertRunStatement(db);
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
