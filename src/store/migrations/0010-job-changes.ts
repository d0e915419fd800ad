import type { Migration } from 'kysely/migration';

/** Migration 0010_job_changes. */
export const jobChanges: Migration = {
  async up(db) {
    // The code changes a job documents: requested with each run (a follow-up adds to its
    // job's), resolved by the worker before the model starts and shown on the job.
    await db.schema.alterTable('job_runs').addColumn('changes', 'text').execute();
    await db.schema
      .alterTable('jobs')
      .addColumn('changes', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
  },
};
