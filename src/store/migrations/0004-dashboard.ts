import type { Migration } from 'kysely/migration';
import { type DialectName, withAutoIncrementId } from '../dialect.ts';

/** Migration 0004_dashboard. */
export const dashboard = (dialect: DialectName): Migration => ({
  async up(db) {
    // Sign-in attempts that failed or are still being checked (docs/dashboard.mdx throttling). Kept in
    // the database so that every API process counts the same attempts.
    await withAutoIncrementId(dialect, db.schema.createTable('sign_in_attempts'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('attempted_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('sign_in_attempts_email')
      .on('sign_in_attempts')
      .columns(['email', 'attempted_at'])
      .execute();
    await db.schema
      .createIndex('sign_in_attempts_address')
      .on('sign_in_attempts')
      .columns(['address', 'attempted_at'])
      .execute();

    // One-time links that let the first person in before any operator exists.
    await db.schema
      .createTable('sign_in_links')
      // Hex SHA-256 of the link's token; the token itself is never stored.
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();

    // The unified diff of a run's commit against the job's base, written when the run ends.
    await db.schema
      .createTable('run_diffs')
      .addColumn('run_id', 'text', (c) => c.primaryKey().references('job_runs.id').onDelete('cascade'))
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('base_commit', 'text', (c) => c.notNull())
      .addColumn('head_commit', 'text', (c) => c.notNull())
      .addColumn('diff', 'text', (c) => c.notNull())
      .addColumn('truncated', 'integer', (c) => c.notNull())
      .addColumn('files', 'integer', (c) => c.notNull())
      .addColumn('additions', 'integer', (c) => c.notNull())
      .addColumn('deletions', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('run_diffs_job').on('run_diffs').columns(['job_id', 'run_id']).execute();

    // The overview counts a project's jobs by status over the last day.
    await db.schema
      .createIndex('jobs_project_updated')
      .on('jobs')
      .columns(['project_id', 'updated_at'])
      .execute();
  },
});
