import { type Kysely, sql } from 'kysely';
import { DEFAULT_MIGRATION_TABLE, type Migration, Migrator } from 'kysely/migration';
import { DocwrightError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { automationsMigration } from './automation-migration.ts';
import { createJobFunctionMigration } from './create-job-function.ts';
import { type DialectName, isDatabaseUnavailable, keepRowCounts, withAutoIncrementId } from './dialect.ts';
import { pollNotifyMigration } from './poll-notify-migration.ts';
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
    '0003_webhooks': {
      async up(db) {
        // Webhooks (SPEC §13): endpoints, the messages job changes write, and their deliveries.
        await db.schema
          .createTable('webhook_endpoints')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('description', 'text')
          .addColumn('events', 'text', (c) => c.notNull())
          .addColumn('secret', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addColumn('disabled_at', 'text')
          .addColumn('disabled_reason', 'text')
          .execute();
        await db.schema
          .createIndex('webhook_endpoints_project')
          .on('webhook_endpoints')
          .columns(['project_id', 'id'])
          .execute();

        await db.schema
          .createTable('webhook_messages')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
          .addColumn('job_id', 'text', (c) => c.references('jobs.id').onDelete('cascade'))
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();

        await db.schema
          .createTable('webhook_deliveries')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('message_id', 'text', (c) =>
            c.notNull().references('webhook_messages.id').onDelete('cascade'),
          )
          .addColumn('endpoint_id', 'text', (c) =>
            c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
          )
          .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', 'text')
          .addColumn('lease_owner', 'text')
          .addColumn('lease_expires_at', 'text')
          .addColumn('last_attempt_at', 'text')
          .addColumn('last_status_code', 'integer')
          .addColumn('last_error', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .execute();
        // The dispatcher's claim scans due deliveries; the history lists them newest first.
        await db.schema
          .createIndex('webhook_deliveries_status_due')
          .on('webhook_deliveries')
          .columns(['status', 'next_attempt_at'])
          .execute();
        await db.schema
          .createIndex('webhook_deliveries_project')
          .on('webhook_deliveries')
          .columns(['project_id', 'id'])
          .execute();
        await db.schema
          .createIndex('webhook_deliveries_endpoint')
          .on('webhook_deliveries')
          .columns(['endpoint_id', 'id'])
          .execute();
        await db.schema
          .createIndex('webhook_deliveries_message')
          .on('webhook_deliveries')
          .column('message_id')
          .execute();

        await withAutoIncrementId(dialect, db.schema.createTable('webhook_attempts'))
          .addColumn('delivery_id', 'text', (c) =>
            c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
          )
          .addColumn('attempted_at', 'text', (c) => c.notNull())
          .addColumn('status_code', 'integer')
          .addColumn('error', 'text')
          .addColumn('response_body', 'text')
          .addColumn('duration_ms', 'integer', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('webhook_attempts_delivery')
          .on('webhook_attempts')
          .columns(['delivery_id', 'id'])
          .execute();
      },
    },
    '0004_dashboard': {
      async up(db) {
        // Sign-in attempts that failed or are still being checked (SPEC §10 throttling). Kept in
        // the database so that every API process counts the same attempts.
        await withAutoIncrementId(dialect, db.schema.createTable('sign_in_attempts'))
          .addColumn('email', 'text', (c) => c.notNull())
          .addColumn('address', 'text', (c) => c.notNull())
          .addColumn('attempted_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('sign_in_attempts_email')
          .on('sign_in_attempts')
          .columns(['email', 'attempted_at'])
          .execute();
        await db.schema
          .createIndex('sign_in_attempts_address')
          .on('sign_in_attempts')
          .columns(['address', 'attempted_at'])
          .execute();

        // One-time links that let the first person in before any operator exists.
        await db.schema
          .createTable('sign_in_links')
          // Hex SHA-256 of the link's token; the token itself is never stored.
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'text', (c) => c.notNull())
          .execute();

        // The unified diff of a run's commit against the job's base, written when the run ends.
        await db.schema
          .createTable('run_diffs')
          .addColumn('run_id', 'text', (c) => c.primaryKey().references('job_runs.id').onDelete('cascade'))
          .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
          .addColumn('base_commit', 'text', (c) => c.notNull())
          .addColumn('head_commit', 'text', (c) => c.notNull())
          .addColumn('diff', 'text', (c) => c.notNull())
          .addColumn('truncated', 'integer', (c) => c.notNull())
          .addColumn('files', 'integer', (c) => c.notNull())
          .addColumn('additions', 'integer', (c) => c.notNull())
          .addColumn('deletions', 'integer', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('run_diffs_job').on('run_diffs').columns(['job_id', 'run_id']).execute();

        // The overview counts a project's jobs by status over the last day.
        await db.schema
          .createIndex('jobs_project_updated')
          .on('jobs')
          .columns(['project_id', 'updated_at'])
          .execute();
      },
    },
    '0005_usage': {
      async up(db) {
        // What each run has spent so far, written as the model answers (SPEC §7: budgets per job,
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
    },
    '0006_rate_limit_counts': {
      async up(db) {
        // How many uses each project has stored, kept by the database beside the uses themselves:
        // counting them on every create took time that grew with the project's limit (up to 1,000,000).
        await db.schema
          .createTable('rate_limit_counts')
          .addColumn('project_id', 'text', (c) =>
            c.primaryKey().references('projects.id').onDelete('cascade'),
          )
          .addColumn('uses', 'integer', (c) => c.notNull())
          .execute();
        await keepRowCounts(dialect, db, {
          table: 'rate_limit_uses',
          key: 'project_id',
          counts: 'rate_limit_counts',
          column: 'uses',
        });
      },
    },
    '0007_head_branches': {
      async up(db) {
        // The head branches docwright created, so that it pushes to no existing branch but these.
        await db.schema
          .createTable('head_branches')
          .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
          .addColumn('branch', 'text', (c) => c.notNull())
          .addColumn('job_id', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('head_branches_pk', ['project_id', 'branch'])
          .execute();
        // Those pushed before: every run that pushed recorded a git.pushed event naming the branch.
        const branch =
          dialect === 'postgres' ? sql`(e.data::jsonb ->> 'branch')` : sql`json_extract(e.data, '$.branch')`;
        await sql`
          insert into head_branches (project_id, branch, job_id, created_at)
          select j.project_id, ${branch}, min(j.id), min(e.created_at)
            from job_events e join jobs j on j.id = e.job_id
           where e.type = 'git.pushed' and ${branch} is not null
           group by j.project_id, ${branch}`.execute(db);
      },
    },
    '0008_server_processes': {
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
    },
    '0009_context_repositories': {
      async up(db) {
        // The code repositories a project's agent may read (SPEC §16). Credentials and the webhook
        // secret are sealed with the project SecretBox: the secret must be recoverable, since §17
        // checks each code host's signature with it.
        await db.schema
          .createTable('context_repositories')
          .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('repository', 'text', (c) => c.notNull())
          .addColumn('host', 'text', (c) => c.notNull())
          .addColumn('api_url', 'text')
          .addColumn('ref', 'text')
          .addColumn('secrets', 'text')
          .addColumn('webhook_secret', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('context_repositories_pk', ['project_id', 'name'])
          .execute();
      },
    },
    '0010_job_changes': {
      async up(db) {
        // The code changes a job documents: requested with each run (a follow-up adds to its
        // job's), resolved by the worker before the model starts and shown on the job.
        await db.schema.alterTable('job_runs').addColumn('changes', 'text').execute();
        await db.schema
          .alterTable('jobs')
          .addColumn('changes', 'text', (c) => c.notNull().defaultTo('[]'))
          .execute();
      },
    },
    '0011_automations': automationsMigration,
    '0012_create_job_function': createJobFunctionMigration(dialect),
    '0013_poll_notify': pollNotifyMigration(dialect),
  };
}

export interface MigrationReport {
  /** Names of the migrations this call applied (empty when already up to date). */
  applied: string[];
}

/**
 * Which docwright release last changed a database's schema: one row beside Kysely's own
 * bookkeeping tables, so that a release which meets a schema newer than it knows can name the
 * release that wrote it.
 */
const VERSION_TABLE = 'docwright_version';

/**
 * Brings the schema up to date. Safe to call from many processes at once:
 * Kysely holds an advisory lock on PostgreSQL, and SQLite's write lock
 * serialises the rest.
 *
 * Reads before it writes: a database that has every migration is left untouched (so a read-only
 * one still opens), and one that has migrations this release does not know, written by a newer
 * docwright, is refused with both versions named and nothing in it changed. `location` names the
 * database in that message.
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  dialect: DialectName,
  schema?: string,
  location?: string,
): Promise<MigrationReport> {
  const all = migrations(dialect);
  const qualify = (table: string) =>
    dialect === 'postgres' && schema ? sql.id(schema, table) : sql.id(table);
  const executed = await readOptional(
    db,
    sql<{ name: string }>`select name from ${qualify(DEFAULT_MIGRATION_TABLE)}`,
  );
  const unknown = executed.map((r) => r.name).filter((name) => !(name in all));
  const [stamp] = await readOptional(
    db,
    sql<{ version: string }>`select version from ${qualify(VERSION_TABLE)}`,
  );
  if (unknown.length > 0) {
    const writer = stamp ? `docwright ${stamp.version}` : 'a newer docwright';
    throw new DocwrightError(
      'service-unavailable',
      `the database${location ? ` ${location}` : ''} was migrated by ${writer}, newer than this docwright ${VERSION} ` +
        `(it has ${unknown.join(', ')}, which ${VERSION} does not know). Nothing in it was changed. ` +
        `Run ${stamp ? `docwright ${stamp.version}` : 'the newer docwright'} or later (npm install -g docwright@latest), ` +
        'or point DOCWRIGHT_DATA_DIR or DATABASE_URL at another database.',
    );
  }
  const recordVersion = () =>
    sql`
    insert into ${qualify(VERSION_TABLE)} (id, version, migrated_at) values (1, ${VERSION}, ${new Date().toISOString()})
    on conflict (id) do update set version = excluded.version, migrated_at = excluded.migrated_at`.execute(
      db,
    );

  if (executed.length > 0 && Object.keys(all).every((name) => executed.some((r) => r.name === name))) {
    // Up to date. A database migrated before releases recorded themselves gets the record now,
    // unless it cannot be written (it still opens; readiness reports that).
    if (!stamp) {
      await createVersionTable(db, qualify).catch(ignoreUnwritable);
      await recordVersion().catch(ignoreUnwritable);
    }
    return { applied: [] };
  }

  if (dialect === 'postgres' && schema) await createSchema(db, schema);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => all },
    ...(dialect === 'postgres' && schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  await createVersionTable(db, qualify);
  if (applied.length > 0 || !stamp) await recordVersion();
  return { applied };
}

/** `if not exists` can still fail on PostgreSQL when two processes run it at once; the loser is fine. */
async function createVersionTable(
  db: Kysely<Database>,
  qualify: (table: string) => ReturnType<typeof sql.id>,
): Promise<void> {
  try {
    await sql`create table if not exists ${qualify(VERSION_TABLE)} (
      id integer primary key, version text not null, migrated_at text not null)`.execute(db);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== '23505' && code !== '42P07') throw error;
  }
}

function ignoreUnwritable(error: unknown): void {
  if (!isDatabaseUnavailable(error)) throw error;
}

/** The rows of a bookkeeping table; none when the table (or the PostgreSQL schema) does not exist yet. */
async function readOptional<R>(
  db: Kysely<Database>,
  query: { execute(db: Kysely<Database>): Promise<{ rows: R[] }> },
): Promise<R[]> {
  try {
    return (await query.execute(db)).rows;
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: string };
    if (code === '42P01' || /no such table/.test(message ?? '')) return [];
    throw error;
  }
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
