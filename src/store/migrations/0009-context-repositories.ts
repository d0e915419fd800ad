import type { Migration } from 'kysely/migration';

/** Migration 0009_context_repositories. */
export const contextRepositories: Migration = {
  async up(db) {
    // The code repositories a project's agent may read (docs/code-context.mdx). Credentials and the webhook
    // secret are sealed with the project SecretBox: the secret must be recoverable, since docs/automations.mdx
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
};
