import type { Migration } from 'kysely/migration';
import { type DialectName, keepRowCounts } from '../dialect.ts';

/** Migration 0006_rate_limit_counts. */
export const rateLimitCounts = (dialect: DialectName): Migration => ({
  async up(db) {
    // How many uses each project has stored, kept by the database beside the uses themselves:
    // counting them on every create took time that grew with the project's limit (up to 1,000,000).
    await db.schema
      .createTable('rate_limit_counts')
      .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
      .addColumn('uses', 'integer', (c) => c.notNull())
      .execute();
    await keepRowCounts(dialect, db, {
      table: 'rate_limit_uses',
      key: 'project_id',
      counts: 'rate_limit_counts',
      column: 'uses',
    });
  },
});
