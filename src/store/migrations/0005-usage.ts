import type { Migration } from 'kysely/migration';

/** Migration 0005_usage. */
export const usage: Migration = {
  async up(db) {
    // What each run has spent so far, written as the model answers (docs/agent.mdx: budgets per job,
    // usage that accrues): model turns and tokens.
    for (const column of ['steps', 'input_tokens', 'output_tokens']) {
      await db.schema
        .alterTable('job_runs')
        .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    }
    // Tokens per project and calendar month (UTC), for the monthly token budget.
    await db.schema
      .createTable('project_usage')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('input_tokens', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('output_tokens', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('project_usage_pk', ['project_id', 'month'])
      .execute();
  },
};
