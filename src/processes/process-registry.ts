/**
 * The running `docwright serve` and `docwright worker` processes, each with the settings of its
 * environment that decide what happens to work: the default model (chosen for a new job by the
 * process that creates it), which model keys and endpoint it has (used by the process that runs
 * the job), and whether webhooks may go to private addresses (checked by the process that sends
 * them). Commands judge by these rather than by their own shell, which may well differ: a
 * variable exported after the server started never reaches it.
 *
 * Each process writes its row at start, refreshes it while it runs and deletes it when it stops,
 * in the database every process shares (SQLite or PostgreSQL alike). A process that died leaves a
 * row that is no longer refreshed: it counts as gone after LIVE_MS. Nothing secret is recorded:
 * keys only as present or not, URLs without credentials, query or fragment.
 */
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import { newServerProcessId } from '../ids.ts';
import type { Logger } from '../logger.ts';
import type { Database, ServerProcessTable } from '../store/schema.ts';
import { VERSION } from '../version.ts';

/** How often a running process refreshes its row. */
const REFRESH_MS = 10_000;
/** A row not refreshed for this long belongs to a process that is gone. */
export const LIVE_MS = 3 * REFRESH_MS;
/** Rows of processes gone this long are removed by the next process that starts. */
const FORGET_MS = 24 * 3600_000;

/** The settings of a process's environment that commands judge by. */
export interface ServerSettings {
  /** `DOCWRIGHT_MODEL`: the model of a job whose project names none. */
  defaultModel: string | null;
  /** Which model keys its environment holds (never the keys). */
  modelKeys: { anthropic: boolean; openai: boolean; openaiCompatible: boolean };
  /** `DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL`, without credentials. */
  openaiCompatibleBaseUrl: string | null;
  /** `DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE`. */
  webhookAllowPrivate: boolean;
  /** `DOCWRIGHT_RATE_LIMIT`: uses per hour of projects that set none (absent in older rows). */
  defaultRateLimit?: number;
}

export interface ServerProcess {
  id: string;
  host: string;
  pid: number;
  servesApi: boolean;
  runsJobs: boolean;
  version: string;
  settings: ServerSettings;
  startedAt: string;
  seenAt: string;
}

const present = (value: string | undefined) => Boolean(value?.trim());

/** A URL as it may be shown: without user, password, query or fragment; an unparsable one is not shown. */
function shownUrl(value: string | undefined): string | null {
  if (!present(value)) return null;
  try {
    const url = new URL(value!.trim());
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(not a valid URL)';
  }
}

/** The settings this process runs with. */
export function effectiveSettings(config: Config, env: NodeJS.ProcessEnv = process.env): ServerSettings {
  return {
    defaultModel: config.defaultModel ?? null,
    modelKeys: {
      anthropic: present(env.ANTHROPIC_API_KEY),
      openai: present(env.OPENAI_API_KEY),
      openaiCompatible: present(env.DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY),
    },
    openaiCompatibleBaseUrl: shownUrl(env.DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL),
    webhookAllowPrivate: config.webhooks.allowPrivate,
    defaultRateLimit: config.defaultRateLimit,
  };
}

/** What a recorded key stands for when a model is resolved with a process's settings (never sent anywhere). */
const RECORDED_KEY = 'set-in-the-server-environment';

/** The model variables of a process's environment as `resolveModel` reads them, keys as stand-ins. */
export function modelEnvironmentOf(settings: ServerSettings): NodeJS.ProcessEnv {
  return {
    ...(settings.modelKeys.anthropic && { ANTHROPIC_API_KEY: RECORDED_KEY }),
    ...(settings.modelKeys.openai && { OPENAI_API_KEY: RECORDED_KEY }),
    ...(settings.modelKeys.openaiCompatible && { DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY: RECORDED_KEY }),
    ...(settings.openaiCompatibleBaseUrl && {
      DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: settings.openaiCompatibleBaseUrl,
    }),
  };
}

const toView = (row: ServerProcessTable): ServerProcess => ({
  id: row.id,
  host: row.host,
  pid: Number(row.pid),
  servesApi: Number(row.serves_api) === 1,
  runsJobs: Number(row.runs_jobs) === 1,
  version: row.version,
  settings: JSON.parse(row.settings) as ServerSettings,
  startedAt: row.started_at,
  seenAt: row.seen_at,
});

/** The processes that have refreshed their row lately, oldest first. */
export async function liveServers(db: Kysely<Database>, now: Date): Promise<ServerProcess[]> {
  const rows = await db
    .selectFrom('server_processes')
    .selectAll()
    .where('seen_at', '>', new Date(now.getTime() - LIVE_MS).toISOString())
    .orderBy('started_at')
    .execute();
  return rows.map(toView);
}

/**
 * The processes whose default model a new job gets: those that take creates (serve the API), or
 * any when none does. A job created elsewhere (a command) must get the model theirs would.
 */
export const jobCreators = (servers: ServerProcess[]): ServerProcess[] => {
  const creators = servers.filter((s) => s.servesApi);
  return creators.length > 0 ? creators : servers;
};

/** What a job created now gets from the process that creates it. */
export interface JobDefaults {
  model: string | undefined;
  rateLimit: number;
}

/**
 * The defaults of a job created now, as the running server would apply them: its
 * `DOCWRIGHT_MODEL` (the first that has one when they disagree) and `DOCWRIGHT_RATE_LIMIT`, or
 * `fallback` (this process's) when no process is running.
 */
export async function runningJobDefaults(
  db: Kysely<Database>,
  now: Date,
  fallback: JobDefaults,
): Promise<JobDefaults> {
  const creators = jobCreators(await liveServers(db, now));
  if (creators.length === 0) return fallback;
  return {
    model: creators.find((s) => s.settings.defaultModel)?.settings.defaultModel ?? undefined,
    rateLimit: creators[0]!.settings.defaultRateLimit ?? fallback.rateLimit,
  };
}

/** `serve on host (pid 123)`: a process, for people. */
export const describeServer = (server: ServerProcess): string =>
  `${server.servesApi ? 'docwright serve' : 'docwright worker'}${server.servesApi && !server.runsJobs ? ' --no-worker' : ''} (pid ${server.pid} on ${server.host})`;

/**
 * Records this process and keeps its row fresh until `stop()`. A database that refuses the
 * write only costs commands their view of this process: it is logged, never thrown.
 */
export function recordServer(
  app: { store: { db: Kysely<Database> }; config: Config; logger: Logger; now: () => Date },
  roles: { servesApi: boolean; runsJobs: boolean },
) {
  const { db } = app.store;
  const id = newServerProcessId();
  const startedAt = app.now().toISOString();
  const settings = JSON.stringify(effectiveSettings(app.config));
  let warned = false;
  // Written whole each time, so that a database that refused the first write gets the row later.
  const write = async () => {
    const seen = app.now().toISOString();
    await db
      .insertInto('server_processes')
      .values({
        id,
        host: hostname(),
        pid: process.pid,
        serves_api: Number(roles.servesApi),
        runs_jobs: Number(roles.runsJobs),
        version: VERSION,
        settings,
        started_at: startedAt,
        seen_at: seen,
      })
      .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: seen }))
      .execute();
  };
  const complain = (error: unknown) => {
    if (warned) return;
    warned = true;
    app.logger.warn(
      { err: { message: (error as Error).message } },
      'could not record this process for docwright commands (they judge its settings by their own environment)',
    );
  };
  const started = (async () => {
    await db
      .deleteFrom('server_processes')
      .where('seen_at', '<', new Date(app.now().getTime() - FORGET_MS).toISOString())
      .execute();
    await write();
  })().catch(complain);
  const timer = setInterval(() => write().catch(complain), REFRESH_MS);
  timer.unref();
  return {
    id,
    /** Resolves once the row is written (or could not be). */
    started,
    async stop(): Promise<void> {
      clearInterval(timer);
      await started;
      await db
        .deleteFrom('server_processes')
        .where('id', '=', id)
        .execute()
        .catch(() => {});
    },
  };
}
