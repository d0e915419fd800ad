import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectName } from '../dialect.ts';

/**
 * Migration 0014 (PostgreSQL only): the database itself announces every change that could make a
 * remembered job poll wrong (src/api/job-poll-cache-postgres.ts), on the channel of the signals
 * (src/store/signals.ts), whoever made it — a service, a worker, a CLI command or SQL by hand:
 * - a job updated: `{"kind":"job-changed","jobId":…}`, once per row;
 * - jobs deleted (a project's deletion): `{"kind":"jobs-changed"}`, once per statement;
 * - an API key revoked, given another expiry, hash or project, or deleted: `{"kind":"keys-changed"}`
 *   (which verified-key caches heed too). A key's recorded use (`last_used_at`) announces nothing.
 * NOTIFY is sent when the transaction commits, so a listener hears of a change only once a read
 * would see it. SQLite needs none of this: its poll cache asks the file (`PRAGMA data_version`).
 */
export function pollNotifyMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      // The channel is the one src/store/signals.ts listens on: `docwright_` + schema, 63 bytes at most.
      await sql`
create function notify_poll_change() returns trigger language plpgsql as $$
declare
  channel text := left('docwright_' || tg_table_schema, 63);
begin
  if tg_table_name = 'jobs' and tg_level = 'ROW' then
    perform pg_notify(channel, json_build_object('kind', 'job-changed', 'jobId', old.id)::text);
  elsif tg_table_name = 'jobs' then
    perform pg_notify(channel, '{"kind":"jobs-changed"}');
  else
    perform pg_notify(channel, '{"kind":"keys-changed"}');
  end if;
  return null;
end $$`.execute(db);
      await sql`create trigger jobs_poll_change after update on jobs
        for each row when (old.* is distinct from new.*) execute function notify_poll_change()`.execute(db);
      await sql`create trigger jobs_poll_delete after delete on jobs
        for each statement execute function notify_poll_change()`.execute(db);
      // Statement level: one announcement however many keys a statement changes.
      await sql`create trigger api_keys_poll_change
        after update of revoked_at, expires_at, hash, project_id or delete on api_keys
        for each statement execute function notify_poll_change()`.execute(db);
    },
  };
}
