/** The head branches docwright created on each project's repository (docs/api/mintlify-v1.mdx). */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

/** Whether docwright created `branch` for a job of the project (a job may then continue it). */
export async function isOwnHeadBranch(
  db: Kysely<Database>,
  projectId: string,
  branch: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('head_branches')
    .select('branch')
    .where('project_id', '=', projectId)
    .where('branch', '=', branch)
    .executeTakeFirst();
  return row !== undefined;
}

/** Records that a run of `jobId` pushed `branch` (the first job to do so keeps the record). */
export async function recordHeadBranch(
  db: Kysely<Database>,
  pushed: { projectId: string; branch: string; jobId: string; at: Date },
): Promise<void> {
  await db
    .insertInto('head_branches')
    .values({
      project_id: pushed.projectId,
      branch: pushed.branch,
      job_id: pushed.jobId,
      created_at: pushed.at.toISOString(),
    })
    .onConflict((oc) => oc.columns(['project_id', 'branch']).doNothing())
    .execute();
}
