import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type App, openApp } from '../../src/app.ts';
import type { ChangeDetailsOf } from '../../src/automations/change-listing.ts';
import type { ContextRepositories } from '../../src/automations/repositories.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { buildServer } from '../../src/server.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { temporaryDirectory } from './temp.ts';

export interface TestApp {
  app: App;
  server: FastifyInstance;
  database: TestDatabase;
  /** Base URL once `listen()` has been called. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Extra environment (DOCWRIGHT_RATE_LIMIT…). */
  env?: Record<string, string>;
  now?: () => Date;
  /** The context repositories and webhook secrets automations see (src/automations/repositories.ts). */
  contexts?: ContextRepositories;
  /** How automations read a change's commits and files (default: through its host). */
  changeDetails?: ChangeDetailsOf;
  /** Where the app logs (default: nowhere). */
  logger?: Logger;
}

/** A docwright app and HTTP server on an isolated database, for in-process tests. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = loadConfig({ ...database.env, DOCWRIGHT_LOG_LEVEL: 'silent', ...options.env });
  const app = await openApp(config, {
    logger: options.logger ?? createLogger('silent'),
    now: options.now,
    contexts: options.contexts,
    changeDetails: options.changeDetails,
  }).catch(async (error) => {
    await database.drop();
    throw error;
  });
  const server = buildServer(app);
  return {
    app,
    server,
    database,
    async listen() {
      return server.listen({ port: 0, host: '127.0.0.1' });
    },
    async close() {
      await server.close();
      await app.close();
      await database.drop();
    },
  };
}

/** A git repository with one commit on `main`, in a temporary directory (removed when the test process exits). */
export function createGitRepository(files: Record<string, string> = { 'index.mdx': '# Hello\n' }): string {
  const dir = temporaryDirectory('docwright-repo-');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  git('add', '-A');
  git('-c', 'user.name=test', '-c', 'user.email=test@example.com', 'commit', '-q', '-m', 'init');
  return dir;
}

export interface SeededProject {
  projectId: string;
  key: string;
  keyId: string;
  repository: string;
}

/** A local project with one API key. */
export async function seedProject(app: App, settings: Record<string, unknown> = {}): Promise<SeededProject> {
  const repository = createGitRepository();
  const project = await app.projects.create({ name: 'Docs', repository, ...settings });
  const key = await app.keys.create(project.id);
  return { projectId: project.id, key: key.key, keyId: key.id, repository };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** A secret with its last character changed (always changed: a fixed replacement is its own last character now and then). */
export const tampered = (secret: string) => `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
