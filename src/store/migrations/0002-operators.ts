import type { Migration } from 'kysely/migration';

/** Migration 0002_operators. */
export const operators: Migration = {
  async up(db) {
    // Dashboard accounts (docs/dashboard.mdx). `email` is stored lower-cased, so the plain
    // unique constraint makes it unique regardless of case in both dialects.
    await db.schema
      .createTable('operators')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('last_sign_in_at', 'text')
      .addColumn('disabled_at', 'text')
      .execute();

    await db.schema
      .createTable('sessions')
      // Hex SHA-256 of the session token; the token itself is never stored.
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('operator_id', 'text', (c) => c.notNull().references('operators.id').onDelete('cascade'))
      .addColumn('csrf_secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_operator').on('sessions').column('operator_id').execute();
  },
};
