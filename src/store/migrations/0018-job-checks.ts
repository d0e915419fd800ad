import type { Migration } from 'kysely/migration';

/** Migration 0018_job_checks. */
export const jobChecks: Migration = {
  async up(db) {
    // AgentJob `checks` (docs/verification.mdx): the last verification's report, as JSON; `[]`
    // until a run verifies. 0017 is the project's check commands.
    await db.schema
      .alterTable('jobs')
      .addColumn('checks', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
  },
};
