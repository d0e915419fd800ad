import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Migration 0020 (docs/pull-request-comments.mdx): the comments that start follow-ups, unique by
 * `comment_key` (host, repository, comment id) so that the database decides which arrival — hook,
 * redelivery, poll, another process — claims a comment; and the poll's cursor per pull request.
 * Everything goes with its job.
 */
export const commentFollowUps: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('comment_follow_ups')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('comment_key', 'text', (c) => c.notNull().unique())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('number', 'integer', (c) => c.notNull())
      .addColumn('comment_id', 'text', (c) => c.notNull())
      .addColumn('reply_to', 'text', (c) => c.notNull())
      .addColumn('author', 'text', (c) => c.notNull())
      .addColumn('prompt', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('run_seq', 'integer')
      .addColumn('refusal_code', 'text')
      .addColumn('refusal_message', 'text')
      .addColumn('started_replied_at', 'text')
      .addColumn('outcome_replied_at', 'text')
      .addColumn('reply_failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .addColumn('reply_lease_until', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // What the reply loop looks for: rows not done yet.
    await db.schema
      .createIndex('comment_follow_ups_open')
      .on('comment_follow_ups')
      .columns(['status', 'created_at'])
      .execute();
    await db.schema.createIndex('comment_follow_ups_job').on('comment_follow_ups').column('job_id').execute();

    await db.schema
      .createTable('comment_poll_cursors')
      .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('since', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
};
