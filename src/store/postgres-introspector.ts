import {
  type DatabaseIntrospector,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE } from 'kysely/migration';

/**
 * Kysely's PostgreSQL introspector reads the tables of every schema in the database, and its
 * query fails ("schema … does not exist") when another schema is dropped while it runs: another
 * tenant's, or another test's. Its one user here is the migrator, asking whether its own tables
 * exist, so this dialect's introspector reads docwright's schema only. Tables come without
 * their columns: nothing here asks for them.
 */
export class SchemaPostgresDialect extends PostgresDialect {
  readonly #schema: string;

  constructor(config: PostgresDialectConfig, schema: string) {
    super(config);
    this.#schema = schema;
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SchemaIntrospector(db, this.#schema);
  }
}

class SchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  readonly #schema: string;

  constructor(db: Kysely<unknown>, schema: string) {
    this.#db = db;
    this.#schema = schema;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<SchemaMetadata>`
      select nspname as name from pg_catalog.pg_namespace where nspname = ${this.#schema}`.execute(this.#db);
    return rows;
  }

  async getTables(options?: DatabaseMetadataOptions): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; kind: string }>`
      select c.relname as name, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = ${this.#schema} and c.relkind in ('r', 'v', 'p', 'f')
      order by c.relname`.execute(this.#db);
    const internal = [DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE];
    return rows
      .filter((r) => options?.withInternalKyselyTables || !internal.includes(r.name))
      .map((r) => ({
        name: r.name,
        schema: this.#schema,
        isView: r.kind === 'v',
        isForeign: r.kind === 'f',
        columns: [],
      }));
  }
}
