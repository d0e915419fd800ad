import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Migration 0021 (docs/slack.mdx): the Slack app's tables. `slack_links`: a channel is linked to
 * one project (its primary key), a project to any number of channels. `slack_events`: verified
 * events as Slack sent them, unique on Slack's `event_id`, so that Slack's retries and several
 * processes store and process each event once. `slack_threads`: the thread a job answers in and
 * the one status message kept up to date there, unique per (channel, thread).
 */
export const slack: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('slack_links')
      .addColumn('channel_id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('linked_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('slack_links_project').on('slack_links').column('project_id').execute();

    await db.schema
      .createTable('slack_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull().unique())
      .addColumn('event_type', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addColumn('claimed_until', 'text')
      .addColumn('processed_at', 'text')
      .addColumn('result', 'text')
      .execute();
    await db.schema
      .createIndex('slack_events_waiting')
      .on('slack_events')
      .columns(['processed_at', 'received_at'])
      .execute();

    await db.schema
      .createTable('slack_threads')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('thread_ts', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('status_ts', 'text')
      .addColumn('last_status', 'text')
      .addColumn('seen_job_update', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('slack_threads_thread', ['channel_id', 'thread_ts'])
      .execute();
    await db.schema.createIndex('slack_threads_job').on('slack_threads').column('job_id').execute();
  },
};
