import type { Migration } from 'kysely/migration';

/** Migration 0012_docs_webhook_secret. */
export const docsWebhookSecret: Migration = {
  async up(db) {
    // The secret code hosts sign webhooks to `/hooks/{projectId}/docs` with (docs/automations.mdx), sealed
    // like a context repository's; null until one is made (`docwright project hook-secret`).
    await db.schema.alterTable('projects').addColumn('docs_webhook_secret', 'text').execute();
  },
};
