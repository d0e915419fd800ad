import { isJobId, isProjectId } from '../ids.ts';
import type { ApiKeyRow, JobRow } from '../store/schema.ts';
import { type AgentJob, toAgentJob } from './agent-job.ts';
import { type JobContext, jobNotFound } from './job-context.ts';

type JobWithKeyRow = Partial<JobRow> & { [C in keyof ApiKeyRow as `key_${C}`]: ApiKeyRow[C] };

/** The key of a row of `jobWithKey`, if the row exists. */
function keyOf(row: JobWithKeyRow | undefined): ApiKeyRow | undefined {
  return (
    row && {
      id: row.key_id,
      project_id: row.key_project_id,
      name: row.key_name,
      hash: row.key_hash,
      last_four: row.key_last_four,
      created_at: row.key_created_at,
      expires_at: row.key_expires_at,
      revoked_at: row.key_revoked_at,
      last_used_at: row.key_last_used_at,
    }
  );
}

/**
 * The key with hash `keyHash` and, if it exists in `projectId`, the job: one statement for the
 * API's most frequent request (a poll). `job()` throws `job-not-found` when there is none; the
 * caller checks the key first.
 */
export function jobWithKey(context: JobContext) {
  const { store, db } = context;
  // A poll's key and job in one statement, compiled once: current by construction, so the key
  // cache (and SQLite's data_version read that keeps it honest) is not needed.
  const statement = db
    .selectFrom('api_keys as k')
    .leftJoin('jobs as j', (join) => join.on('j.id', '=', '').on('j.project_id', '=', ''))
    .selectAll('j')
    .select([
      'k.id as key_id',
      'k.project_id as key_project_id',
      'k.name as key_name',
      'k.hash as key_hash',
      'k.last_four as key_last_four',
      'k.created_at as key_created_at',
      'k.expires_at as key_expires_at',
      'k.revoked_at as key_revoked_at',
      'k.last_used_at as key_last_used_at',
    ])
    .where('k.hash', '=', '')
    .compile();

  return async (projectId: string, jobId: string, keyHash: string) => {
    // An id of the wrong shape matches nothing (and PostgreSQL would refuse a NUL byte in it).
    const parameters = [isJobId(jobId) ? jobId : '', isProjectId(projectId) ? projectId : '', keyHash];
    const row = (await store.read<JobWithKeyRow>({ ...statement, parameters }))[0];
    return {
      key: keyOf(row),
      job(): AgentJob {
        if (!row?.id) throw jobNotFound(jobId);
        return toAgentJob(row as JobRow);
      },
    };
  };
}
