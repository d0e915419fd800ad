import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectName } from '../dialect.ts';
import { applyFunctionFile } from './function-files.ts';

/**
 * Migration 0022 (PostgreSQL only): `create_job` and `claim_run` as their `.sql` files define them
 * (src/jobs/create_job.sql, src/jobs/queue/claim_run.sql), so that the current definition of each
 * has one home beside the code that calls it. The files hold the text of 0013's and 0016's
 * functions unchanged: this migration changes nothing a database does (test/store/function-files.test.ts).
 */
export function functionFilesMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      await applyFunctionFile(db, 'jobs/create_job.sql');
      await applyFunctionFile(db, 'jobs/queue/claim_run.sql');
    },
  };
}
