/**
 * A project's context repositories (docs/code-context.mdx): the code repositories its agent reads, never
 * writes. Each has the same URL rules, hosts and encrypted credentials as the project's own
 * repository (docs/configuration.mdx), and a webhook secret code hosts sign their events with (docs/automations.mdx), sealed rather than
 * hashed because checking a signature needs the secret itself.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { DocwrightError } from '../errors.ts';
import { processSecrets } from '../redact.ts';
import { DOCS_REPOSITORY } from '../repository-names.ts';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Store } from '../store/database.ts';
import type { ContextRepositoryRow } from '../store/schema.ts';
import { branchName, parseOrThrow } from '../validation.ts';
import { checkRepositoryAddresses, HOSTS, type HostKind, resolveRepository } from './repository.ts';
import type { SecretBox } from './secret-box.ts';

/** Most context repositories a project may have. */
export const MAX_CONTEXT_REPOSITORIES = 10;
/** Where `webhookUrl` points when neither `DOCWRIGHT_PUBLIC_URL` nor a request says otherwise. */
export const DEFAULT_BASE_URL = 'http://localhost:8080';

const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const SLUG_MESSAGE =
  'must be a slug: lowercase letters, digits, - and _, starting with a letter or digit, at most 63 characters';

const contextRepositoryInput = z
  .object({
    name: z
      .string()
      .regex(SLUG, SLUG_MESSAGE)
      .refine((name) => name !== DOCS_REPOSITORY, {
        message: 'docs is reserved for the project’s own repository; choose another name',
      }),
    repository: z.string().min(1).max(2000),
    host: z.enum(HOSTS).optional(),
    apiUrl: z
      .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
      .max(2000)
      .optional(),
    ref: branchName().optional(),
    token: z.string().min(1).max(10_000).optional(),
  })
  .strict();
export type ContextRepositoryInput = z.input<typeof contextRepositoryInput>;

/** A context repository as every command and page shows it: never its secrets. */
export interface ContextRepositoryView {
  name: string;
  repository: string;
  host: HostKind;
  apiUrl: string | null;
  /** The branch read by default; null: the repository's default branch. */
  ref: string | null;
  /** Whether a token is stored (never the token). */
  hasToken: boolean;
  /** Where the code host sends its webhooks (docs/automations.mdx): `<base>/hooks/<projectId>/<name>`. */
  webhookUrl: string;
  createdAt: string;
}

/** What the worker needs to read a context repository: its credentials, decrypted. */
export interface ContextRepositoryAccess {
  name: string;
  repository: string;
  host: HostKind;
  apiUrl: string | null;
  ref: string | null;
  secrets: { token?: string };
}

export interface ContextRepositoryOptions {
  /**
   * The address code hosts reach docwright at, when `DOCWRIGHT_PUBLIC_URL` is unset (e.g. the
   * dashboard request's own origin). Default `http://localhost:8080`.
   */
  baseUrl?: string | undefined;
}

export interface ContextRepositoryService {
  /** Adds one; the webhook secret is returned this once (and later only by `webhookSecretFor`). */
  add(
    projectId: string,
    input: unknown,
    options?: ContextRepositoryOptions,
  ): Promise<ContextRepositoryView & { webhookSecret: string }>;
  /** The project's context repositories, by name. */
  list(projectId: string, options?: ContextRepositoryOptions): Promise<ContextRepositoryView[]>;
  /** Removes one; `context-repository-not-found` when the project has none of that name. */
  remove(projectId: string, name: string, options?: ContextRepositoryOptions): Promise<ContextRepositoryView>;
  /** Every context repository of the project with its credentials decrypted, for the worker; never rendered. */
  accessFor(projectId: string): Promise<ContextRepositoryAccess[]>;
  /**
   * The secret a code host signs webhooks to `/hooks/{projectId}/{name}` with (docs/automations.mdx), `docs` being
   * the project's own repository; undefined when there is none.
   */
  webhookSecretFor(projectId: string, name: string): Promise<string | undefined>;
  /** Every hook secret of the project (its own repository's and each context repository's), for a run's redactor. */
  hookSecrets(projectId: string): Promise<string[]>;
  /** The project's own repository's hook URL (`docs-push` automations), and whether a secret is set. */
  docsWebhook(projectId: string, options?: ContextRepositoryOptions): Promise<DocsWebhookView>;
  /**
   * Makes a new secret for the project's own repository's webhooks, replacing any earlier one
   * (which stops verifying within `VERIFIER_TTL_MS`); returned this once.
   */
  newDocsWebhookSecret(
    projectId: string,
    options?: ContextRepositoryOptions,
  ): Promise<DocsWebhookView & { webhookSecret: string }>;
}

/** The hook URL of the project's own repository (docs/automations.mdx, `docs`). */
export interface DocsWebhookView {
  name: typeof DOCS_REPOSITORY;
  webhookUrl: string;
  /** Whether a secret is set (never the secret). */
  hasSecret: boolean;
}

export function createContextRepositoryService(deps: {
  store: Store;
  secretBox: () => SecretBox;
  /** `DOCWRIGHT_PUBLIC_URL`: when set, the base of every `webhookUrl`. */
  publicUrl?: string | undefined;
  now?: () => Date;
  /** `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`: repositories may be on link-local and metadata addresses. */
  allowLinkLocalRepositories?: boolean;
}): ContextRepositoryService {
  const { db } = deps.store;
  const now = () => (deps.now ?? (() => new Date()))().toISOString();

  function hookUrl(projectId: string, name: string, options: ContextRepositoryOptions = {}): string {
    const base = (deps.publicUrl ?? options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    return `${base}/hooks/${encodeURIComponent(projectId)}/${encodeURIComponent(name)}`;
  }

  function view(row: ContextRepositoryRow, options: ContextRepositoryOptions = {}): ContextRepositoryView {
    const sealed: Record<string, string> = row.secrets ? JSON.parse(row.secrets) : {};
    return {
      ...whereToRead(row),
      hasToken: Boolean(sealed.token),
      webhookUrl: hookUrl(row.project_id, row.name, options),
      createdAt: row.created_at,
    };
  }

  const rowsOf = (projectId: string) => deps.store.read(repositoriesOf(db, { projectId }));

  async function mustHaveProject(projectId: string) {
    const project = await db
      .selectFrom('projects')
      .select('id')
      .where('id', '=', projectId)
      .executeTakeFirst();
    if (!project) throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
  }

  return {
    async add(projectId, raw, options) {
      const input = parseOrThrow(contextRepositoryInput, raw);
      await mustHaveProject(projectId);
      const { url, host } = await resolveRepository(input);
      await checkRepositoryAddresses(
        { repository: url, apiUrl: input.apiUrl },
        deps.allowLinkLocalRepositories ?? false,
      );
      const webhookSecret = randomBytes(32).toString('base64url');
      processSecrets.add(webhookSecret, ...(input.token ? [input.token] : []));
      const row: ContextRepositoryRow = {
        project_id: projectId,
        name: input.name,
        repository: url,
        host,
        api_url: input.apiUrl ?? null,
        ref: input.ref ?? null,
        secrets: input.token ? JSON.stringify({ token: deps.secretBox().seal(input.token) }) : null,
        webhook_secret: deps.secretBox().seal(webhookSecret),
        created_at: now(),
      };
      await db.transaction().execute(async (trx) => {
        // The project's row, locked on PostgreSQL, orders concurrent adds, so that the limit holds
        // (SQLite runs one write transaction at a time).
        let project = trx.selectFrom('projects').select('id').where('id', '=', projectId);
        if (deps.store.dialect === 'postgres') project = project.forUpdate();
        if (!(await project.executeTakeFirst())) {
          throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
        }
        const names = await trx
          .selectFrom('context_repositories')
          .select('name')
          .where('project_id', '=', projectId)
          .execute();
        if (names.some((n) => n.name === input.name)) {
          throw new DocwrightError(
            'context-repository-exists',
            `project ${projectId} already has a context repository named ${input.name}; choose another name, or remove it first`,
            { fields: [{ field: 'name', message: 'is taken in this project' }] },
          );
        }
        if (names.length >= MAX_CONTEXT_REPOSITORIES) {
          throw new DocwrightError(
            'too-many-context-repositories',
            `project ${projectId} has ${names.length} context repositories, the most it may have; remove one first`,
          );
        }
        await trx.insertInto('context_repositories').values(row).execute();
      });
      return { ...view(row, options), webhookSecret };
    },

    async list(projectId, options) {
      await mustHaveProject(projectId);
      return (await rowsOf(projectId)).map((row) => view(row, options));
    },

    async remove(projectId, name, options) {
      await mustHaveProject(projectId);
      const [row] = await db
        .deleteFrom('context_repositories')
        .where('project_id', '=', projectId)
        .where('name', '=', name)
        .returningAll()
        .execute();
      if (!row) {
        throw new DocwrightError(
          'context-repository-not-found',
          `project ${projectId} has no context repository named ${name}`,
        );
      }
      return view(row, options);
    },

    async accessFor(projectId) {
      return (await rowsOf(projectId)).map((row) => contextRepositoryAccess(row, deps.secretBox()));
    },

    async webhookSecretFor(projectId, name) {
      if (name === DOCS_REPOSITORY) {
        const project = await db
          .selectFrom('projects')
          .select('docs_webhook_secret')
          .where('id', '=', projectId)
          .executeTakeFirst();
        return project?.docs_webhook_secret ? opened(project.docs_webhook_secret) : undefined;
      }
      const row = await db
        .selectFrom('context_repositories')
        .select('webhook_secret')
        .where('project_id', '=', projectId)
        .where('name', '=', name)
        .executeTakeFirst();
      return row ? opened(row.webhook_secret) : undefined;
    },

    async hookSecrets(projectId) {
      const [project, contexts] = await Promise.all([
        db
          .selectFrom('projects')
          .select('docs_webhook_secret')
          .where('id', '=', projectId)
          .executeTakeFirst(),
        db
          .selectFrom('context_repositories')
          .select('webhook_secret')
          .where('project_id', '=', projectId)
          .execute(),
      ]);
      const sealed = [project?.docs_webhook_secret, ...contexts.map((row) => row.webhook_secret)];
      return sealed.filter((value): value is string => typeof value === 'string').map(opened);
    },

    async docsWebhook(projectId, options) {
      const project = await db
        .selectFrom('projects')
        .select('docs_webhook_secret')
        .where('id', '=', projectId)
        .executeTakeFirst();
      if (!project) throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
      return {
        name: DOCS_REPOSITORY,
        webhookUrl: hookUrl(projectId, DOCS_REPOSITORY, options),
        hasSecret: project.docs_webhook_secret !== null,
      };
    },

    async newDocsWebhookSecret(projectId, options) {
      const webhookSecret = randomBytes(32).toString('base64url');
      processSecrets.add(webhookSecret);
      const updated = await db
        .updateTable('projects')
        .set({ docs_webhook_secret: deps.secretBox().seal(webhookSecret) })
        .where('id', '=', projectId)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) {
        throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
      }
      return {
        name: DOCS_REPOSITORY,
        webhookUrl: hookUrl(projectId, DOCS_REPOSITORY, options),
        hasSecret: true,
        webhookSecret,
      };
    },
  };

  function opened(sealed: string): string {
    const secret = deps.secretBox().open(sealed);
    processSecrets.add(secret);
    return secret;
  }
}

/** The columns a context repository's access is made of (see `contextRepositoryAccess`). */
export const ACCESS_COLUMNS = ['name', 'repository', 'host', 'api_url', 'ref', 'secrets'] as const;

/** A context repository with its credentials opened, from its row; for the worker, never rendered. */
export function contextRepositoryAccess(
  row: Pick<ContextRepositoryRow, (typeof ACCESS_COLUMNS)[number]>,
  secretBox: SecretBox,
): ContextRepositoryAccess {
  const sealed: Record<string, string> = row.secrets ? JSON.parse(row.secrets) : {};
  const secrets: { token?: string } = {};
  if (sealed.token) secrets.token = secretBox.open(sealed.token);
  if (secrets.token) processSecrets.add(secrets.token);
  return { ...whereToRead(row), secrets };
}

/** What names a context repository and where it is read: the part its view and its access share. */
function whereToRead(row: Pick<ContextRepositoryRow, 'name' | 'repository' | 'host' | 'api_url' | 'ref'>) {
  return {
    name: row.name,
    repository: row.repository,
    host: row.host as HostKind,
    apiUrl: row.api_url,
    ref: row.ref,
  };
}

/** A project's context repositories, by name (listings, automations): compiled once. */
const repositoriesOf = compiledQuery<{ projectId: string }, ContextRepositoryRow>(['projectId'], (db, p) =>
  db
    .selectFrom('context_repositories')
    .selectAll()
    .where('project_id', '=', p.projectId)
    .orderBy('name')
    .compile(),
);
