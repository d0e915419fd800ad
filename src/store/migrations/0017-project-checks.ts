import type { Migration } from 'kysely/migration';

/** Migration 0017_project_checks. */
export const projectChecks: Migration = {
  async up(db) {
    // The project's check commands (SPEC §19, docs/verification.mdx): a JSON array of command
    // lines run after each job's changes. A column of its own rather than a key of `settings`:
    // only operators set it (CLI, settings page), and no surface that writes settings can reach it.
    await db.schema
      .alterTable('projects')
      .addColumn('checks', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
  },
};
