import type { Migration } from 'kysely/migration';

/** Migration 0019_job_answers. */
export const jobAnswers: Migration = {
  async up(db) {
    // Questions (docs/questions.mdx): a job's mode, `edit` for every job before this one, and an
    // ask job's answer with its citations (JSON, `[]` for edit jobs and before an answer).
    await db.schema
      .alterTable('jobs')
      .addColumn('mode', 'text', (c) => c.notNull().defaultTo('edit'))
      .execute();
    await db.schema.alterTable('jobs').addColumn('answer', 'text').execute();
    await db.schema
      .alterTable('jobs')
      .addColumn('citations', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
  },
};
