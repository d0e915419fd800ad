import { type Kysely, sql } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import { type DialectName, withAutoIncrementId } from './dialect.ts';
import type { Database } from './schema.ts';

/**
 * The schema's history, oldest first. A migration, once released, is never
 * edited: add a new one. Names sort in the order they must run.
 */
function migrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001_foundation': {
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
    },
    '0002_operators': {
      async up(db) {
        // Dashboard accounts (SPEC §10). `email` is stored lower-cased, so the plain
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
    },
  };
}

export interface MigrationReport {
  /** Names of the migrations this call applied (empty when already up to date). */
  applied: string[];
}

/**
 * Brings the schema up to date. Safe to call from many processes at once:
 * Kysely holds an advisory lock on PostgreSQL, and SQLite's write lock
 * serialises the rest.
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  dialect: DialectName,
  schema?: string,
): Promise<MigrationReport> {
  if (dialect === 'postgres' && schema) await createSchema(db, schema);
  const all = migrations(dialect);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => all },
    ...(dialect === 'postgres' && schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

export interface MigrationStatus {
  /** Migrations of this version the database has, oldest first. */
  applied: string[];
  /** Migrations of this version the database lacks (what `migrateToLatest` would apply). */
  pending: string[];
}

/**
 * Which migrations the database has and lacks, changing nothing: no schema, table or lock is
 * created (for `docwright doctor`, which must not migrate as a side effect).
 */
export async function migrationStatus(
  db: Kysely<Database>,
  dialect: DialectName,
  schema?: string,
): Promise<MigrationStatus> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations(dialect) },
    ...(dialect === 'postgres' && schema ? { migrationTableSchema: schema } : {}),
  });
  const all = await migrator.getMigrations();
  return {
    applied: all.filter((m) => m.executedAt !== undefined).map((m) => m.name),
    pending: all.filter((m) => m.executedAt === undefined).map((m) => m.name),
  };
}

/** `create schema if not exists` can still fail when two processes run it at once; the loser is fine. */
async function createSchema(db: Kysely<Database>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw error;
  }
}
