import { type Kysely, sql } from 'kysely';
import { DEFAULT_MIGRATION_TABLE, type Migration, Migrator } from 'kysely/migration';
import { isDatabaseUnavailable } from '../database-errors.ts';
import { DocwrightError } from '../errors.ts';
import { VERSION } from '../version.ts';
import type { DialectName } from './dialect.ts';
import { foundation } from './migrations/0001-foundation.ts';
import { operators } from './migrations/0002-operators.ts';
import { webhooks } from './migrations/0003-webhooks.ts';
import { dashboard } from './migrations/0004-dashboard.ts';
import { usage } from './migrations/0005-usage.ts';
import { rateLimitCounts } from './migrations/0006-rate-limit-counts.ts';
import { headBranches } from './migrations/0007-head-branches.ts';
import { serverProcesses } from './migrations/0008-server-processes.ts';
import { contextRepositories } from './migrations/0009-context-repositories.ts';
import { jobChanges } from './migrations/0010-job-changes.ts';
import { automations } from './migrations/0011-automations.ts';
import { docsWebhookSecret } from './migrations/0012-docs-webhook-secret.ts';
import { createJobFunctionMigration } from './migrations/0013-create-job-function.ts';
import { pollNotifyMigration } from './migrations/0014-poll-notify.ts';
import { claimRunFunctionMigration } from './migrations/0015-claim-run-function.ts';
import { claimRunReturnsJobMigration } from './migrations/0016-claim-run-returns-job.ts';
import { projectChecks } from './migrations/0017-project-checks.ts';
import { jobChecks } from './migrations/0018-job-checks.ts';
import { jobAnswers } from './migrations/0019-job-answers.ts';
import { commentFollowUps } from './migrations/0020-comment-follow-ups.ts';
import { slack } from './migrations/0021-slack.ts';
import { functionFilesMigration } from './migrations/0022-function-files.ts';
import type { Database } from './schema.ts';

/**
 * The schema's history, oldest first. A migration, once released, is never
 * edited: add a new one. Names sort in the order they must run.
 */
function migrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001_foundation': foundation(dialect),
    '0002_operators': operators,
    '0003_webhooks': webhooks(dialect),
    '0004_dashboard': dashboard(dialect),
    '0005_usage': usage,
    '0006_rate_limit_counts': rateLimitCounts(dialect),
    '0007_head_branches': headBranches(dialect),
    '0008_server_processes': serverProcesses,
    '0009_context_repositories': contextRepositories,
    '0010_job_changes': jobChanges,
    '0011_automations': automations,
    '0012_docs_webhook_secret': docsWebhookSecret,
    '0013_create_job_function': createJobFunctionMigration(dialect),
    '0014_poll_notify': pollNotifyMigration(dialect),
    '0015_claim_run_function': claimRunFunctionMigration(dialect),
    '0016_claim_run_returns_job': claimRunReturnsJobMigration(dialect),
    '0017_project_checks': projectChecks,
    '0018_job_checks': jobChecks,
    '0019_job_answers': jobAnswers,
    '0020_comment_follow_ups': commentFollowUps,
    '0021_slack': slack,
    '0022_function_files': functionFilesMigration(dialect),
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
