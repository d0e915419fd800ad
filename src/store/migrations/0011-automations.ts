import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Migration 0011 (docs/automations.mdx): automations and their runs, the run keys that make a run exactly
 * once per (automation, change) and per (automation, scheduled time) across processes, verified
 * webhook deliveries (unique per project, name and delivery id, so that a redelivery stores
 * nothing) and the polling fallback's cursors. Everything goes with its project.
 */
export const automations: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('automations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('trigger', 'text', (c) => c.notNull())
      .addColumn('instruction', 'text', (c) => c.notNull())
      .addColumn('draft', 'integer', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('handled_through', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('automations_project').on('automations').column('project_id').execute();

    await db.schema
      .createTable('automation_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id').onDelete('cascade'))
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('trigger_type', 'text', (c) => c.notNull())
      .addColumn('changes', 'text', (c) => c.notNull())
      .addColumn('scheduled_for', 'text')
      .addColumn('job_id', 'text')
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('automation_runs_automation')
      .on('automation_runs')
      .columns(['automation_id', 'id'])
      .execute();

    // No foreign key to the run: the keys are written first, so that the database's unique index
    // decides which of several processes creates the run.
    await db.schema
      .createTable('automation_run_keys')
      .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('automation_run_keys_pk', ['automation_id', 'key'])
      .execute();

    await db.schema
      .createTable('hook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('event', 'text')
      .addColumn('content_type', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addColumn('processed_at', 'text')
      .addColumn('result', 'text')
      .addUniqueConstraint('hook_deliveries_delivery', ['project_id', 'name', 'delivery_id'])
      .execute();
    await db.schema
      .createIndex('hook_deliveries_waiting')
      .on('hook_deliveries')
      .columns(['processed_at', 'received_at'])
      .execute();

    await db.schema
      .createTable('automation_poll_cursors')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('repository', 'text', (c) => c.notNull())
      .addColumn('cursor', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('automation_poll_cursors_pk', ['project_id', 'repository'])
      .execute();
  },
};
