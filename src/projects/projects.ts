import type { Kysely } from 'kysely';
import { jsonArrayFrom as postgresJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import { z } from 'zod';
import { DocwrightError } from '../errors.ts';
import { createHost, gitAccess } from '../git/hosts/index.ts';
import { findDefaultBranch } from '../git/inspect.ts';
import type { MirrorCache } from '../git/mirror.ts';
import { newProjectId } from '../ids.ts';
import type { KeyService } from '../keys/keys.ts';
import { processSecrets } from '../redact.ts';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Store } from '../store/database.ts';
import type { ContextRepositoryRow, Database, ProjectRow } from '../store/schema.ts';
import type { Signals } from '../store/signals.ts';
import {
  branchName,
  branchPrefix,
  commitEmail,
  globPattern,
  MODEL_PATTERN,
  parseOrThrow,
  relativePath,
} from '../validation.ts';
import {
  ACCESS_COLUMNS,
  type ContextRepositoryAccess,
  contextRepositoryAccess,
} from './context-repositories.ts';
import { deleteProjectRows, type ProjectDeletionImpact, projectDeletionImpact } from './project-deletion.ts';
import { checkRepositoryAddresses, HOSTS, type HostKind, resolveRepository } from './repository.ts';
import type { SecretBox } from './secret-box.ts';

/** Markdown, MDX and the configuration files of the docs sites we recognise. */
export const DEFAULT_WRITABLE = [
  '**/*.md',
  '**/*.mdx',
  '**/*.rst',
  'docs.json',
  'mint.json',
  'mkdocs.yml',
  'sidebars.js',
  'sidebars.ts',
  'docusaurus.config.js',
  'docusaurus.config.ts',
  '.vitepress/config.*',
  'astro.config.*',
];

const model = z
  .string()
  .regex(MODEL_PATTERN, 'must be provider/model-id with provider anthropic, openai or openai-compatible');
const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' });

/** Check commands a project may have: each runs after every job, so a few (SPEC §19). */
export const MAX_CHECKS = 20;

/**
 * One check command line (SPEC §19): run with `sh -c` in the job's sandboxed checkout. One line:
 * the settings page and `project show` list one command a line.
 */
const checkCommand = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(2000)
  .refine((command) => !/[\r\n\0]/.test(command), 'must be one line');

/** Every settable project field; `create` requires name and repository. */
const projectFields = {
  name: z.string().trim().min(1, 'is required').max(200),
  repository: z.string().trim().min(1, 'is required').max(2000),
  host: z.enum(HOSTS),
  apiUrl: httpUrl.nullable(),
  token: z.string().min(1).max(10_000).nullable(),
  githubAppId: z.string().regex(/^\d+$/, 'must be a number').nullable(),
  githubPrivateKey: z.string().includes('PRIVATE KEY', { message: 'must be a PEM private key' }).nullable(),
  githubInstallationId: z.string().regex(/^\d+$/, 'must be a number').nullable(),
  anthropicApiKey: z.string().min(1).max(1000).nullable(),
  openaiApiKey: z.string().min(1).max(1000).nullable(),
  openaiCompatibleApiKey: z.string().min(1).max(1000).nullable(),
  ref: branchName(),
  docsDir: relativePath(),
  writable: z.array(globPattern()).min(1).max(100),
  readOnly: z.array(relativePath()).max(10_000),
  model: model.nullable(),
  allowedModels: z.array(model).max(50),
  openaiCompatibleBaseUrl: httpUrl.nullable(),
  draft: z.boolean(),
  commentOnSource: z.boolean(),
  labels: z.array(z.string().min(1).max(100)).max(20),
  branchPrefix: branchPrefix(),
  authorName: z.string().min(1).max(200),
  authorEmail: commitEmail(),
  rateLimit: z.number().int().min(1).max(1_000_000).nullable(),
  monthlyTokenBudget: z.number().int().min(1).max(1_000_000_000_000).nullable(),
  checks: z.array(checkCommand).max(MAX_CHECKS),
};

export const projectCreateInput = z
  .object(projectFields)
  .partial()
  .required({ name: true, repository: true })
  .strict();
export const projectUpdateInput = z.object(projectFields).partial().strict();
export type ProjectCreateInput = z.input<typeof projectCreateInput>;
export type ProjectUpdateInput = z.input<typeof projectUpdateInput>;

/** Non-secret settings stored as JSON. */
const settingsSchema = z.object({
  docsDir: z.string().default('.'),
  writable: z.array(z.string()).default(DEFAULT_WRITABLE),
  /** Paths the agent never writes, writable or not (`docwright eval --dogbench`: the code its change touched). */
  readOnly: z.array(z.string()).default([]),
  allowedModels: z.array(z.string()).default([]),
  openaiCompatibleBaseUrl: z.string().nullable().default(null),
  draft: z.boolean().default(false),
  /**
   * Comment on each source pull request a job documents with the docs pull request's link, or the
   * agent's reason when no docs change was needed (docs/code-context.mdx).
   */
  commentOnSource: z.boolean().default(false),
  labels: z.array(z.string()).default([]),
  branchPrefix: z.string().default('docwright/'),
  authorName: z.string().default('docwright[bot]'),
  authorEmail: z.string().default('docwright[bot]@users.noreply.github.com'),
  /** Model tokens (input + output) the project may spend per calendar month (UTC); null: no limit. */
  monthlyTokenBudget: z.number().nullable().default(null),
});
export type ProjectSettings = z.output<typeof settingsSchema>;

/** The settings of a project created without them: every surface (dashboard, CLI, API) uses these. */
export const PROJECT_DEFAULTS: Readonly<ProjectSettings> = Object.freeze(settingsSchema.parse({}));

const secretsSchema = z.object({
  token: z.string().optional(),
  githubAppId: z.string().optional(),
  githubPrivateKey: z.string().optional(),
  githubInstallationId: z.string().optional(),
  anthropicApiKey: z.string().optional(),
  openaiApiKey: z.string().optional(),
  openaiCompatibleApiKey: z.string().optional(),
});
export type ProjectSecrets = z.output<typeof secretsSchema>;
const secretNames = [
  'token',
  'githubAppId',
  'githubPrivateKey',
  'githubInstallationId',
  'anthropicApiKey',
  'openaiApiKey',
  'openaiCompatibleApiKey',
] as const;

/**
 * The confidential values among a project's secrets, for redactors. The GitHub App and
 * installation ids are stored with them but are not confidential, and redacting every
 * occurrence of a short number would garble logs and events.
 */
export function confidentialValues(secrets: ProjectSecrets): string[] {
  const { githubAppId: _app, githubInstallationId: _installation, ...confidential } = secrets;
  return Object.values(confidential).filter((value): value is string => typeof value === 'string');
}

/** A project as every API and command shows it: settings, never secrets. */
export interface ProjectView {
  id: string;
  name: string;
  repository: string;
  host: HostKind;
  apiUrl: string | null;
  ref: string;
  model: string | null;
  rateLimit: number | null;
  settings: ProjectSettings;
  /** Check commands run after each job's changes (SPEC §19); set by operators, never by the repository. */
  checks: string[];
  /** Which credentials are set (true/false), never their values. */
  credentials: {
    token: boolean;
    githubApp: boolean;
    modelKeys: ('anthropic' | 'openai' | 'openai-compatible')[];
  };
  createdAt: string;
  updatedAt: string;
}

export interface ProjectService {
  create(input: unknown): Promise<ProjectView>;
  update(id: string, input: unknown): Promise<ProjectView>;
  get(id: string): Promise<ProjectView>;
  list(): Promise<ProjectView[]>;
  /** The stored row, for code that needs raw fields (jobs). */
  getRow(id: string): Promise<ProjectRow | undefined>;
  /** Decrypted credentials, for the worker; never rendered. */
  getSecrets(id: string): Promise<ProjectSecrets>;
  /**
   * What a run starts with, from one read: the project, its decrypted credentials and its context
   * repositories with theirs (by name).
   */
  getForRun(
    id: string,
  ): Promise<{ project: ProjectView; secrets: ProjectSecrets; contexts: ContextRepositoryAccess[] }>;
  /** What deleting the project would remove (for a confirmation). */
  deletionImpact(id: string): Promise<ProjectDeletionImpact>;
  /** Deletes the project and everything of it (see project-deletion.ts), and its git mirrors on this machine. */
  delete(id: string): Promise<ProjectView & { deleted: ProjectDeletionImpact & { mirrors: number } }>;
}

export function createProjectService(deps: {
  store: Store;
  secretBox: () => SecretBox;
  now?: () => Date;
  /** Tells workers, event streams and key caches of every process about a deletion. */
  signals?: Signals;
  /** Forgets this process's verified keys at once when a deletion removes keys. */
  keys?: Pick<KeyService, 'forgetVerified'>;
  /** This machine's git mirrors, removed with their project. */
  mirrors?: Pick<MirrorCache, 'discardProject'>;
  /** `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`: repositories may be on link-local and metadata addresses. */
  allowLinkLocalRepositories?: boolean;
}): ProjectService {
  const { db } = deps.store;
  const now = () => (deps.now ?? (() => new Date()))().toISOString();
  const allowLinkLocal = deps.allowLinkLocalRepositories ?? false;

  function view(row: ProjectRow): ProjectView {
    const secrets = row.secrets ? JSON.parse(row.secrets) : {};
    return {
      id: row.id,
      name: row.name,
      repository: row.repository,
      host: row.host as HostKind,
      apiUrl: row.api_url,
      ref: row.ref,
      model: row.model,
      rateLimit: row.rate_limit,
      settings: settingsSchema.parse(JSON.parse(row.settings)),
      checks: z.array(z.string()).parse(JSON.parse(row.checks)),
      // The stored JSON maps each secret name to its sealed value; presence is not secret.
      credentials: {
        token: Boolean(secrets.token),
        githubApp: Boolean(secrets.githubPrivateKey),
        modelKeys: [
          ...(secrets.anthropicApiKey ? (['anthropic'] as const) : []),
          ...(secrets.openaiApiKey ? (['openai'] as const) : []),
          ...(secrets.openaiCompatibleApiKey ? (['openai-compatible'] as const) : []),
        ],
      },
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  async function getRow(id: string): Promise<ProjectRow | undefined> {
    return (await deps.store.read(projectById(db, { id })))[0];
  }

  async function mustGetRow(id: string) {
    const row = await getRow(id);
    if (!row) throw new DocwrightError('project-not-found', `project ${id} does not exist`);
    return row;
  }

  function openSecrets(row: ProjectRow): ProjectSecrets {
    if (!row.secrets) return {};
    const sealed: Record<string, string> = JSON.parse(row.secrets);
    const open: Record<string, string> = {};
    for (const [name, value] of Object.entries(sealed)) open[name] = deps.secretBox().open(value);
    const secrets = secretsSchema.parse(open);
    processSecrets.add(...confidentialValues(secrets));
    return secrets;
  }

  /** Each secret sealed on its own, so that updating one keeps the others. */
  function sealSecrets(existing: string | null, input: ProjectUpdateInput): string | null {
    const sealed: Record<string, string> = existing ? JSON.parse(existing) : {};
    for (const name of secretNames) {
      const value = input[name];
      if (value === undefined) continue;
      if (value === null) delete sealed[name];
      else sealed[name] = deps.secretBox().seal(value);
    }
    processSecrets.add(
      ...confidentialValues(Object.fromEntries(secretNames.map((name) => [name, input[name]]))),
    );
    return Object.keys(sealed).length > 0 ? JSON.stringify(sealed) : null;
  }

  function mergeSettings(current: ProjectSettings, input: ProjectUpdateInput): ProjectSettings {
    const next = { ...current };
    for (const key of Object.keys(settingsSchema.shape) as (keyof ProjectSettings)[]) {
      const value = input[key as keyof ProjectUpdateInput];
      if (value !== undefined) (next as Record<string, unknown>)[key] = value;
    }
    return next;
  }

  /**
   * The repository's default branch, asked with the credentials the request gave: a private
   * repository answers nobody else. Undefined when it cannot be told (the caller asks for `ref`).
   */
  async function defaultBranchOf(url: string, host: HostKind, input: ProjectCreateInput) {
    if (host === 'local') return findDefaultBranch(url);
    try {
      const access = await gitAccess(
        createHost(
          { host, repository: url, apiUrl: input.apiUrl ?? null },
          {
            token: input.token ?? undefined,
            githubAppId: input.githubAppId ?? undefined,
            githubPrivateKey: input.githubPrivateKey ?? undefined,
            githubInstallationId: input.githubInstallationId ?? undefined,
          },
          { allowLinkLocal },
        ),
        undefined,
        { allowLinkLocal },
      );
      return (await findDefaultBranch(access.url, access.env)) ?? (await findDefaultBranch(url));
    } catch {
      return findDefaultBranch(url);
    }
  }

  return {
    getRow,
    async get(id) {
      return view(await mustGetRow(id));
    },
    async list() {
      const rows = await db.selectFrom('projects').selectAll().orderBy('id').execute();
      return rows.map(view);
    },
    async create(raw) {
      const input = parseOrThrow(projectCreateInput, raw);
      const { url, host } = await resolveRepository(input);
      await checkRepositoryAddresses({ repository: url, apiUrl: input.apiUrl }, allowLinkLocal);
      const ref = input.ref ?? (await defaultBranchOf(url, host, input));
      if (!ref) {
        const message = `cannot read the default branch of ${url}; set ref`;
        throw new DocwrightError('invalid-request', message, { fields: [{ field: 'ref', message }] });
      }
      const settings = mergeSettings(settingsSchema.parse({}), input);
      const timestamp = now();
      const row: ProjectRow = {
        id: newProjectId(),
        name: input.name,
        repository: url,
        host,
        api_url: input.apiUrl ?? null,
        ref,
        model: input.model ?? null,
        rate_limit: input.rateLimit ?? null,
        settings: JSON.stringify(settings),
        secrets: sealSecrets(null, input),
        docs_webhook_secret: null,
        checks: JSON.stringify(input.checks ?? []),
        created_at: timestamp,
        updated_at: timestamp,
      };
      await db.insertInto('projects').values(row).execute();
      return view(row);
    },
    async update(id, raw) {
      const input = parseOrThrow(projectUpdateInput, raw);
      const current = await mustGetRow(id);
      const repository =
        input.repository !== undefined || input.host !== undefined
          ? await resolveRepository({ repository: input.repository ?? current.repository, host: input.host })
          : { url: current.repository, host: current.host as HostKind };
      await checkRepositoryAddresses(
        {
          repository: input.repository !== undefined ? repository.url : undefined,
          apiUrl: input.apiUrl,
        },
        allowLinkLocal,
      );
      const settings = mergeSettings(settingsSchema.parse(JSON.parse(current.settings)), input);
      const changes = {
        name: input.name ?? current.name,
        repository: repository.url,
        host: repository.host,
        api_url: input.apiUrl !== undefined ? input.apiUrl : current.api_url,
        ref: input.ref ?? current.ref,
        model: input.model !== undefined ? input.model : current.model,
        rate_limit: input.rateLimit !== undefined ? input.rateLimit : current.rate_limit,
        settings: JSON.stringify(settings),
        secrets: sealSecrets(current.secrets, input),
        checks: input.checks !== undefined ? JSON.stringify(input.checks) : current.checks,
        updated_at: now(),
      };
      await db.updateTable('projects').set(changes).where('id', '=', id).execute();
      return view({ ...current, ...changes });
    },
    async deletionImpact(id) {
      await mustGetRow(id);
      return projectDeletionImpact(db, id);
    },
    async delete(id) {
      const row = await mustGetRow(id);
      const { impact, signals } = await deleteProjectRows(db, id);
      deps.keys?.forgetVerified();
      // Nudges: a missed one only delays the effect until the next check.
      for (const signal of signals) await deps.signals?.publish(signal).catch(() => {});
      const mirrors = (await deps.mirrors?.discardProject(id)) ?? [];
      return { ...view(row), deleted: { ...impact, mirrors: mirrors.length } };
    },
    async getSecrets(id) {
      return openSecrets(await mustGetRow(id));
    },
    async getForRun(id) {
      const forRun = deps.store.dialect === 'postgres' ? projectForRunPostgres : projectForRunSqlite;
      const [found] = await deps.store.read(forRun(db, { id }));
      if (!found) throw new DocwrightError('project-not-found', `project ${id} does not exist`);
      const { context_repositories: contexts, ...row } = found;
      // PostgreSQL answers JSON parsed; SQLite, its text.
      const repositories: ContextAccessRow[] = typeof contexts === 'string' ? JSON.parse(contexts) : contexts;
      return {
        project: view(row),
        secrets: openSecrets(row),
        contexts: repositories.map((repository) => contextRepositoryAccess(repository, deps.secretBox())),
      };
    },
  };
}

/** Nearly every read of a project goes through it: compiled once. */
const projectById = compiledQuery<{ id: string }, ProjectRow>(['id'], (db, p) =>
  db.selectFrom('projects').selectAll().where('id', '=', p.id).compile(),
);

type ContextAccessRow = Pick<ContextRepositoryRow, (typeof ACCESS_COLUMNS)[number]>;

/** A run's project with its context repositories (each dialect aggregates JSON its own way): compiled once. */
const projectForRun = (jsonArrayFrom: typeof sqliteJsonArrayFrom) =>
  compiledQuery<{ id: string }, ProjectRow & { context_repositories: ContextAccessRow[] | string }>(
    ['id'],
    (db: Kysely<Database>, p) =>
      db
        .selectFrom('projects')
        .selectAll('projects')
        .select((eb) =>
          jsonArrayFrom(
            eb
              .selectFrom('context_repositories')
              .select(ACCESS_COLUMNS)
              .whereRef('context_repositories.project_id', '=', 'projects.id')
              .orderBy('context_repositories.name'),
          ).as('context_repositories'),
        )
        .where('projects.id', '=', p.id)
        .compile(),
  );
const projectForRunPostgres = projectForRun(postgresJsonArrayFrom);
const projectForRunSqlite = projectForRun(sqliteJsonArrayFrom);
