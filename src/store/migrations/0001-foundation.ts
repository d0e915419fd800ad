import type { Migration } from 'kysely/migration';
import { type DialectName, withAutoIncrementId } from '../dialect.ts';

/** Migration 0001_foundation. */
export const foundation = (dialect: DialectName): Migration => ({
  async up(db) {
    await db.schema
      .createTable('projects')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('repository', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('api_url', 'text')
      .addColumn('ref', 'text', (c) => c.notNull())
      .addColumn('model', 'text')
      .addColumn('rate_limit', 'integer')
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('secrets', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text')
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('last_four', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('revoked_at', 'text')
      .addColumn('last_used_at', 'text')
      .execute();
    await db.schema.createIndex('api_keys_project').on('api_keys').column('project_id').execute();

    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('repository', 'text', (c) => c.notNull())
      .addColumn('ref', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('draft', 'integer')
      .addColumn('pr_link', 'text')
      .addColumn('branch', 'text')
      .addColumn('summary', 'text')
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('input_tokens', 'integer')
      .addColumn('output_tokens', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('archived_at', 'text')
      .execute();
    // Listing is newest first per project, optionally by status; ids sort by creation.
    await db.schema.createIndex('jobs_project_id').on('jobs').columns(['project_id', 'id']).execute();
    await db.schema
      .createIndex('jobs_project_status_id')
      .on('jobs')
      .columns(['project_id', 'status', 'id'])
      .execute();

    await db.schema
      .createTable('job_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('prompt', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('summary', 'text')
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text')
      .addColumn('ended_at', 'text')
      .addUniqueConstraint('job_runs_job_seq', ['job_id', 'seq'])
      .execute();
    // The claim scans queued runs oldest first; the sweeper scans running ones by lease.
    await db.schema.createIndex('job_runs_status_id').on('job_runs').columns(['status', 'id']).execute();
    await db.schema
      .createIndex('job_runs_project_status')
      .on('job_runs')
      .columns(['project_id', 'status'])
      .execute();

    await withAutoIncrementId(dialect, db.schema.createTable('job_events'))
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('run_id', 'text')
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('job_events_job_id').on('job_events').columns(['job_id', 'id']).execute();

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('location', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['project_id', 'key'])
      .execute();

    await withAutoIncrementId(dialect, db.schema.createTable('rate_limit_uses'))
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('used_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('rate_limit_uses_project_used_at')
      .on('rate_limit_uses')
      .columns(['project_id', 'used_at'])
      .execute();
  },
});
