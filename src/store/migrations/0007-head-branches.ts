import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectName } from '../dialect.ts';

/** Migration 0007_head_branches. */
export const headBranches = (dialect: DialectName): Migration => ({
  async up(db) {
    // The head branches docwright created, so that it pushes to no existing branch but these.
    await db.schema
      .createTable('head_branches')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('branch', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('head_branches_pk', ['project_id', 'branch'])
      .execute();
    // Those pushed before: every run that pushed recorded a git.pushed event naming the branch.
    const branch =
      dialect === 'postgres' ? sql`(e.data::jsonb ->> 'branch')` : sql`json_extract(e.data, '$.branch')`;
    await sql`
      insert into head_branches (project_id, branch, job_id, created_at)
      select j.project_id, ${branch}, min(j.id), min(e.created_at)
        from job_events e join jobs j on j.id = e.job_id
       where e.type = 'git.pushed' and ${branch} is not null
       group by j.project_id, ${branch}`.execute(db);
  },
});
