-- The schema of a docwright 0.1 database on SQLite: migration 0001_foundation and Kysely's
-- bookkeeping, as executed by the first release's migrator (captured from its query log). Frozen:
-- test/store/upgrade.test.ts builds an old database from it, whatever migrations.ts says today.
create table if not exists "kysely_migration" ("name" varchar(255) not null primary key, "timestamp" varchar(255) not null);
create table if not exists "kysely_migration_lock" ("id" varchar(255) not null primary key, "is_locked" integer default 0 not null);
insert into "kysely_migration_lock" ("id", "is_locked") values ('migration_lock', 0);
create table "projects" ("id" text primary key, "name" text not null, "repository" text not null, "host" text not null, "api_url" text, "ref" text not null, "model" text, "rate_limit" integer, "settings" text not null, "secrets" text, "created_at" text not null, "updated_at" text not null);
create table "api_keys" ("id" text primary key, "project_id" text not null references "projects" ("id") on delete cascade, "name" text, "hash" text not null unique, "last_four" text not null, "created_at" text not null, "expires_at" text, "revoked_at" text, "last_used_at" text);
create index "api_keys_project" on "api_keys" ("project_id");
create table "jobs" ("id" text primary key, "project_id" text not null references "projects" ("id") on delete cascade, "status" text not null, "repository" text not null, "ref" text not null, "model" text not null, "draft" integer, "pr_link" text, "branch" text, "summary" text, "error_code" text, "error_message" text, "input_tokens" integer, "output_tokens" integer, "created_at" text not null, "updated_at" text not null, "archived_at" text);
create index "jobs_project_id" on "jobs" ("project_id", "id");
create index "jobs_project_status_id" on "jobs" ("project_id", "status", "id");
create table "job_runs" ("id" text primary key, "job_id" text not null references "jobs" ("id") on delete cascade, "project_id" text not null references "projects" ("id") on delete cascade, "seq" integer not null, "prompt" text not null, "status" text not null, "attempts" integer default 0 not null, "lease_owner" text, "lease_expires_at" text, "summary" text, "error_code" text, "error_message" text, "created_at" text not null, "started_at" text, "ended_at" text, constraint "job_runs_job_seq" unique ("job_id", "seq"));
create index "job_runs_status_id" on "job_runs" ("status", "id");
create index "job_runs_project_status" on "job_runs" ("project_id", "status");
create table "job_events" ("id" integer primary key autoincrement, "job_id" text not null references "jobs" ("id") on delete cascade, "run_id" text, "type" text not null, "data" text not null, "created_at" text not null);
create index "job_events_job_id" on "job_events" ("job_id", "id");
create table "idempotency_keys" ("project_id" text not null references "projects" ("id") on delete cascade, "key" text not null, "fingerprint" text not null, "status_code" integer not null, "body" text not null, "location" text, "created_at" text not null, constraint "idempotency_keys_pk" primary key ("project_id", "key"));
create table "rate_limit_uses" ("id" integer primary key autoincrement, "project_id" text not null references "projects" ("id") on delete cascade, "used_at" text not null);
create index "rate_limit_uses_project_used_at" on "rate_limit_uses" ("project_id", "used_at");
insert into "kysely_migration" ("name", "timestamp") values ('0001_foundation', '2026-11-23T17:52:51.857Z');
