import type { Insertable, Kysely } from 'kysely';
import { compileInsert } from '../../../store/compiled-insert.ts';
import type { Database, JobRunTable } from '../../../store/schema.ts';

/** A run whose values only stand in for parameters (see compileInsert). */
export const RUN_TEMPLATE: Insertable<JobRunTable> = {
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

/** The INSERT of a queued run, compiled once per database. */
export const insertRunStatement = (db: Kysely<Database>) => compileInsert(db, 'job_runs', RUN_TEMPLATE);
