import type { Migration } from 'kysely/migration';

/** Migration 0008_server_processes. */
export const serverProcesses: Migration = {
  async up(db) {
    // The running server and worker processes and the settings of their environment that
    // commands must judge by (the model, webhook egress): a command's own environment is not
    // the server's. Rows are refreshed while a process runs and deleted when it stops.
    await db.schema
      .createTable('server_processes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('serves_api', 'integer', (c) => c.notNull())
      .addColumn('runs_jobs', 'integer', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('seen_at', 'text', (c) => c.notNull())
      .execute();
  },
};
