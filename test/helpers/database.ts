import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { StoreOptions } from '../../src/store/database.ts';

/**
 * Which database this test run uses: `DOCWRIGHT_TEST_DB=postgres` or the
 * default SQLite. `npm test` runs the whole suite once with each.
 */
export const testDialect: 'sqlite' | 'postgres' =
  process.env.DOCWRIGHT_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export const TEST_POSTGRES_URL =
  process.env.DOCWRIGHT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Every migration this release has, in order (what a fresh database gets). */
export const ALL_MIGRATIONS = [
  '0001_foundation',
  '0002_operators',
  '0003_webhooks',
  '0004_dashboard',
  '0005_usage',
  '0006_rate_limit_counts',
  '0007_head_branches',
  '0008_server_processes',
  '0009_context_repositories',
  '0010_job_changes',
  '0011_automations',
  '0012_docs_webhook_secret',
  '0013_create_job_function',
  '0014_poll_notify',
  '0015_claim_run_function',
  '0016_claim_run_returns_job',
  '0017_project_checks',
  '0018_job_checks',
  '0019_job_answers',
  '0020_comment_follow_ups',
  '0021_slack',
  '0022_function_files',
];

/** A `projects` row written straight to the database (for tests below the services). */
export function projectRow(id: string, at = new Date().toISOString()) {
  return {
    id,
    name: id,
    repository: 'file:///x',
    host: 'local',
    api_url: null,
    ref: 'main',
    model: null,
    rate_limit: null,
    settings: '{}',
    secrets: null,
    created_at: at,
    updated_at: at,
  };
}

export interface TestDatabase {
  /** Environment variables that point docwright at this database. */
  env: Record<string, string>;
  /** The SQLite data directory (also used for secret.key on PostgreSQL runs). */
  dataDir: string;
  schema: string | undefined;
  drop(): Promise<void>;
}

/** An isolated database: a fresh SQLite file, or a fresh PostgreSQL schema. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docwright-test-'));
  if (testDialect === 'sqlite') {
    return {
      env: { DOCWRIGHT_DATA_DIR: dataDir },
      dataDir,
      schema: undefined,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  return {
    env: {
      DOCWRIGHT_DATA_DIR: dataDir,
      DATABASE_URL: TEST_POSTGRES_URL,
      DOCWRIGHT_DATABASE_SCHEMA: schema,
      DOCWRIGHT_SECRET_KEY: 'test-secret-key-0123456789',
    },
    dataDir,
    schema,
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await client.end();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** What `openStore` needs to open this test database (it migrates unless told `migrate: false`). */
export function storeOptions(database: TestDatabase): StoreOptions {
  return {
    dataDir: database.dataDir,
    databaseUrl: database.env.DATABASE_URL,
    databaseSchema: database.schema,
  };
}
