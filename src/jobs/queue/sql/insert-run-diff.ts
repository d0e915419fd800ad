import type { Kysely } from 'kysely';
import type { RunDiff } from '../../../git/diff.ts';
import type { Database, JobRunRow } from '../../../store/schema.ts';

/** Keeps the diff of a run that committed (the job page and follow-ups read it). */
export const insertRunDiffStatement = (db: Kysely<Database>, run: JobRunRow, diff: RunDiff, at: string) =>
  db.insertInto('run_diffs').values({
    run_id: run.id,
    job_id: run.job_id,
    base_commit: diff.base,
    head_commit: diff.head,
    diff: diff.text,
    truncated: Number(diff.truncated),
    files: diff.files,
    additions: diff.additions,
    deletions: diff.deletions,
    created_at: at,
  });
