/**
 * The checks behind `docwright doctor` (docs/cli.mdx): configuration, database and migrations,
 * secret key, git, model endpoints and every project's code host — each a named result with a
 * status and one precise line, run with bounded concurrency and a timeout each. Nothing here
 * prints (doctor.ts renders) and nothing changes state: no migration, no file, no push.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { projectModelOptions } from '../agent/model-resolution.ts';
import { type App, openApp } from '../app.ts';
import { type Config, loadConfig } from '../config.ts';
import { environmentSecrets } from '../environment-secrets.ts';
import { DocwrightError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { liveServers } from '../processes/process-registry.ts';
import { confidentialValues, type ProjectSecrets, type ProjectView } from '../projects/projects.ts';
import { createRedactor, processSecrets, type Redact } from '../redact.ts';
import { type MigrationStatus, migrationStatus } from '../store/migrations.ts';
import { databaseServerVersion } from '../store/server-version.ts';
import {
  checkGit,
  checkGlobalModel,
  checkProjectHost,
  checkProjectModel,
  checkProjectRepository,
  type ModelProbe,
  type Outcome,
} from './doctor-probes.ts';
import { checkProjectChecks, checkSandbox } from './doctor-sandbox.ts';
import {
  checkServedDefault,
  checkServedModel,
  runningServers,
  servedDefaultModel,
} from './doctor-servers.ts';

export type CheckStatus = Outcome['status'];

export interface CheckResult {
  name: string;
  status: CheckStatus;
  /** One line, never a secret. */
  detail: string;
  /** The id of the project the check is about (absent for global checks). */
  project?: string;
}

export interface DoctorReport {
  /** In a stable order: global checks, then each project's. */
  checks: CheckResult[];
  /** Project id → name, for people. */
  projectNames: Map<string, string>;
}

export interface DoctorProgress {
  done: number;
  total: number;
  /** Labels of the checks under way, e.g. `host (Docs)`. */
  running: string[];
}

export interface DoctorOptions {
  env?: NodeJS.ProcessEnv;
  /** Check only this project (a `project-not-found` DocwrightError when it does not exist). */
  projectId?: string;
  /** Resolve models (keys, base URLs) without sending them a request. */
  skipModel?: boolean;
  /** Longest one check may take (default 20 s). */
  timeoutMs?: number;
  /** Checks under way at once (default 8). */
  concurrency?: number;
  onProgress?(progress: DoctorProgress): void;
}

type Task = (label: string, fn: (signal: AbortSignal) => Promise<Outcome>) => Promise<Outcome>;
type Add = (name: string, outcome: Outcome | Promise<Outcome>, project?: ProjectView) => void;
/** A project's decrypted credentials, or why they cannot be had. */
type Loaded = Map<string, ProjectSecrets | string>;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Runs tasks at most `concurrency` at a time, each with its own timeout: on expiry its signal
 * aborts and it fails with "no answer within …", whether or not the work heeds the signal.
 */
function scheduler(concurrency: number, timeoutMs: number, onProgress?: DoctorOptions['onProgress']): Task {
  const running: string[] = [];
  const waiting: (() => void)[] = [];
  let active = 0;
  let done = 0;
  let total = 0;
  const report = () => onProgress?.({ done, total, running: [...running] });
  return async (label, fn) => {
    total++;
    report();
    // A finished task hands its slot to the next waiting one, so no newcomer can jump in between.
    if (active < concurrency) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    running.push(label);
    report();
    const controller = new AbortController();
    const within = `no answer within ${timeoutMs / 1000} s`;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error(within));
        resolve({ status: 'fail', detail: within });
      }, timeoutMs);
    });
    try {
      const work = fn(controller.signal).catch(
        (error: unknown): Outcome => ({ status: 'fail', detail: message(error) }),
      );
      return await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
      running.splice(running.indexOf(label), 1);
      done++;
      const next = waiting.shift();
      if (next) next();
      else active--;
      report();
    }
  };
}

/** Runs every check. Throws only for a `--project` that does not exist. */
export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const task = scheduler(options.concurrency ?? 8, timeoutMs, options.onProgress);
  const secrets = environmentSecrets(env);
  const pending: Promise<CheckResult>[] = [];
  const projectNames = new Map<string, string>();
  const add: Add = (name, outcome, project) => {
    if (project) projectNames.set(project.id, project.name);
    pending.push(
      Promise.resolve(outcome).then((o) => ({ name, ...o, ...(project && { project: project.id }) })),
    );
  };

  // git needs no configuration: it is checked whatever else fails.
  const gitOutcome = task('git', checkGit);
  let config: Config | undefined;
  try {
    config = loadConfig(env);
    const database = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `SQLite in ${config.dataDir}`;
    const model = config.defaultModel
      ? `DOCWRIGHT_MODEL ${config.defaultModel}`
      : 'DOCWRIGHT_MODEL not set in this shell';
    add('configuration', { status: 'ok', detail: `valid: ${database}, ${model}` });
  } catch (error) {
    add('configuration', {
      status: 'fail',
      detail: `${message(error)} (database, model and project checks need a valid configuration)`,
    });
  }
  add('git', gitOutcome);
  add(
    'check commands',
    task('check commands', () => checkSandbox(env)),
  );

  let app: App | undefined;
  try {
    if (config) {
      const database = await openDatabase(config, task, add);
      app = database.app;
      const projects = await findProjects(database, options.projectId, add);
      const loaded = await checkSecretKey(config, app, projects, add);
      const probe: ModelProbe = { skip: options.skipModel ?? false, env, memo: new Map() };
      const defaults = config;
      // A running server's settings decide a job's model, not this shell's (doctor-servers.ts).
      const servers = app ? await liveServers(app.store.db, app.now()).catch(() => []) : [];
      const running = servers.length > 0 ? runningServers(servers, config, env) : undefined;
      add(
        'model',
        task('model', (signal) =>
          running
            ? checkServedDefault(running, projects, probe, signal)
            : checkGlobalModel(defaults.defaultModel, projects, probe, signal),
        ),
      );
      for (const project of projects) {
        const credentials = loaded.get(project.id) ?? {};
        if (typeof credentials === 'string') {
          add('credentials', { status: 'fail', detail: credentials }, project);
          continue;
        }
        secrets.push(...confidentialValues(credentials));
        const redact = createRedactor([...secrets]);
        const remember = (secret: string): Redact => {
          // A GitHub App's installation token is minted, not stored: logs must not show it either.
          processSecrets.add(secret);
          secrets.push(secret);
          return createRedactor([...secrets]);
        };
        const label = (name: string) => `${name} (${project.name})`;
        add(
          'host',
          task(label('host'), (s) =>
            checkProjectHost(project, credentials, redact, timeoutMs, s, defaults.allowLinkLocalRepositories),
          ),
          project,
        );
        add(
          'repository',
          task(label('repository'), (s) =>
            checkProjectRepository(
              project,
              credentials,
              redact,
              remember,
              timeoutMs,
              s,
              defaults.allowLinkLocalRepositories,
            ),
          ),
          project,
        );
        add(
          'model',
          task(label('model'), (s) =>
            running
              ? checkServedModel(
                  project.model ?? servedDefaultModel(running),
                  projectModelOptions(project, credentials, env),
                  running,
                  probe,
                  s,
                )
              : checkProjectModel(defaults.defaultModel, project, credentials, probe, s),
          ),
          project,
        );
        if (project.checks.length > 0) {
          add(
            'checks',
            task(label('checks'), () => checkProjectChecks(env, project)),
            project,
          );
        }
      }
    }
  } finally {
    await Promise.allSettled(pending);
    await app?.close();
  }

  const checks = await Promise.all(pending);
  // A last pass with every secret met on the way, project keys and minted tokens included.
  const redact = createRedactor(secrets);
  return {
    checks: checks.map((c) => ({
      ...c,
      detail: redact(c.detail)
        .replace(/\s*\n\s*/g, ' ')
        .trim(),
    })),
    projectNames,
  };
}

/**
 * Opens the database without migrating, and reports where it is, whether it answers and which
 * migrations it lacks. A SQLite file that does not exist yet is not created. `empty`: no
 * migration ever ran, so there are no tables (and no projects) to read.
 */
async function openDatabase(
  config: Config,
  task: Task,
  add: Add,
): Promise<{ app: App | undefined; empty: boolean }> {
  if (!config.databaseUrl) {
    const file = path.join(config.dataDir, 'docwright.db');
    if (!existsSync(file)) {
      add('database', {
        status: 'warn',
        detail: `no database at ${file} yet: run docwright migrate (docwright serve creates it at start)`,
      });
      return { app: undefined, empty: true };
    }
  }
  let app: App | undefined;
  const opened = await task('database', async (signal) => {
    const level = config.logLevel === 'info' ? 'warn' : config.logLevel;
    const candidate = await openApp(config, {
      migrate: false,
      logger: createLogger(level, pino.destination(2)),
    });
    try {
      await candidate.store.ping();
      const version = await databaseServerVersion(candidate.store);
      if (signal.aborted) throw signal.reason;
      app = candidate;
      return { status: 'ok', detail: `${version} at ${candidate.store.location} answers` };
    } catch (error) {
      await candidate.close().catch(() => {});
      return {
        status: 'fail',
        detail: `cannot use the database at ${candidate.store.location}: ${message(error)}`,
      };
    }
  });
  add('database', opened);
  if (!app) return { app: undefined, empty: false };
  const ready: App = app;
  let found: MigrationStatus | undefined;
  add(
    'migrations',
    await task('migrations', async () => {
      found = await migrationStatus(ready.store.db, ready.store.dialect, config.databaseSchema);
      return describeMigrations(found);
    }),
  );
  return { app: ready, empty: found?.applied.length === 0 };
}

function describeMigrations(status: MigrationStatus): Outcome {
  if (status.pending.length === 0) {
    return {
      status: 'ok',
      detail: `up to date (${plural(status.applied.length, 'migration')}, latest ${status.applied.at(-1)})`,
    };
  }
  return {
    status: 'warn',
    detail: `${plural(status.pending.length, 'pending migration')} (${status.pending.join(', ')}): run docwright migrate (docwright serve and worker apply them at start)`,
  };
}

/** The projects to check. A `--project` that does not exist throws (exit code 2). */
async function findProjects(
  database: { app: App | undefined; empty: boolean },
  projectId: string | undefined,
  add: Add,
): Promise<ProjectView[]> {
  const { app, empty } = database;
  if (empty && projectId)
    throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
  if (!app || empty) {
    if (projectId)
      add('projects', { status: 'fail', detail: `cannot check ${projectId}: no usable database` });
    return [];
  }
  if (projectId) return [await app.projects.get(projectId)];
  try {
    const projects = await app.projects.list();
    add(
      'projects',
      projects.length > 0
        ? { status: 'ok', detail: `${plural(projects.length, 'project')} to check` }
        : { status: 'warn', detail: 'no projects yet: create one with docwright project create' },
    );
    return projects;
  } catch (error) {
    add('projects', { status: 'fail', detail: `cannot list the projects: ${message(error)}` });
    return [];
  }
}

/**
 * Where the key that encrypts project credentials comes from, and whether it opens the
 * credentials stored. Never generates a key: without one, stored credentials are reported
 * as undecryptable instead of being opened (which would write a new, wrong `secret.key`).
 */
async function checkSecretKey(
  config: Config,
  app: App | undefined,
  projects: ProjectView[],
  add: Add,
): Promise<Loaded> {
  const file = path.join(config.dataDir, 'secret.key');
  const source = config.secretKey ? 'DOCWRIGHT_SECRET_KEY' : config.databaseUrl ? undefined : file;
  const usable = config.secretKey !== undefined || (source !== undefined && existsSync(file));
  const loaded: Loaded = new Map();
  let stored = 0;
  let undecryptable = 0;
  for (const project of app ? projects : []) {
    try {
      const row = await app!.projects.getRow(project.id);
      if (!row?.secrets) {
        loaded.set(project.id, {});
        continue;
      }
      stored++;
      if (!usable) {
        loaded.set(
          project.id,
          'its stored credentials cannot be decrypted without the secret key (see "secret key")',
        );
        continue;
      }
      loaded.set(project.id, await app!.projects.getSecrets(project.id));
    } catch (error) {
      undecryptable++;
      loaded.set(project.id, `cannot read its credentials: ${message(error)}`);
    }
  }
  const whose = plural(stored, 'project');
  if (!usable) {
    const missing = config.databaseUrl
      ? 'DOCWRIGHT_SECRET_KEY is not set'
      : `${file} is missing and DOCWRIGHT_SECRET_KEY is not set`;
    if (stored > 0) {
      add('secret key', {
        status: 'fail',
        detail: `${missing}: the stored credentials of ${whose} cannot be decrypted (restore the key)`,
      });
    } else if (config.databaseUrl) {
      add('secret key', {
        status: 'warn',
        detail: `${missing}: with DATABASE_URL, projects cannot store credentials (tokens, model keys)`,
      });
    } else {
      add('secret key', {
        status: 'ok',
        detail: `none yet: one is generated into ${file} when a project first stores credentials`,
      });
    }
  } else if (undecryptable > 0) {
    add('secret key', {
      status: 'fail',
      detail: `the key from ${source} does not open the stored credentials of ${undecryptable} of ${whose}: it differs from the key they were saved with`,
    });
  } else {
    add('secret key', {
      status: 'ok',
      detail: `from ${source}${stored > 0 ? `; opens the stored credentials of ${whose}` : ''}`,
    });
  }
  return loaded;
}
