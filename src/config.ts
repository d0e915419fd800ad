import path from 'node:path';
import { z } from 'zod';
import { DocwrightError } from './errors.ts';

/** Server-wide settings, read from the environment once at start. */
export interface Config {
  /** Where the embedded default keeps its SQLite file and generated secret key (`DOCWRIGHT_DATA_DIR`). */
  dataDir: string;
  /** `postgres://…` to use PostgreSQL instead of SQLite (`DATABASE_URL`). */
  databaseUrl: string | undefined;
  /** PostgreSQL schema to keep docwright's tables in (`DOCWRIGHT_DATABASE_SCHEMA`, default `public`). */
  databaseSchema: string;
  /** Key that encrypts project secrets at rest (`DOCWRIGHT_SECRET_KEY`). */
  secretKey: string | undefined;
  /** Model used when neither the request nor the project names one (`DOCWRIGHT_MODEL`). */
  defaultModel: string | undefined;
  /** Longest accepted `prompt`, in characters after trimming (`DOCWRIGHT_PROMPT_MAX_CHARS`). */
  promptMaxChars: number;
  /** Uses per project per rolling hour for projects that set no limit (`DOCWRIGHT_RATE_LIMIT`). */
  defaultRateLimit: number;
  /** pino log level (`DOCWRIGHT_LOG_LEVEL`). */
  logLevel: string;
  /**
   * The first dashboard account, created at start when no operator exists
   * (`DOCWRIGHT_ADMIN_EMAIL`, default `admin@localhost`, and `DOCWRIGHT_ADMIN_PASSWORD`).
   */
  admin: { email: string; password: string | undefined };
  worker: WorkerSettings;
  /** Budgets of one agent run (SPEC §7). */
  agent: { maxSteps: number; maxTokens: number; maxDurationMs: number; maxRepairRounds: number };
}

/** How workers run jobs (SPEC §9). */
export interface WorkerSettings {
  /** Runs one worker process executes at once (`DOCWRIGHT_WORKER_CONCURRENCY`, default 4). */
  concurrency: number;
  /** Runs of one project executing at once across all workers (`DOCWRIGHT_PROJECT_CONCURRENCY`, default 5). */
  projectConcurrency: number;
  /** Lease on a claimed run, renewed every third of it (`DOCWRIGHT_LEASE_SECONDS`, default 60). */
  leaseMs: number;
  /** Claims before a run whose worker keeps vanishing fails with `worker-lost` (`DOCWRIGHT_MAX_ATTEMPTS`, default 3). */
  maxAttempts: number;
  /** Longest a run may be queued plus running (`DOCWRIGHT_JOB_TIME_LIMIT_MINUTES`, default 20). */
  jobTimeLimitMs: number;
  /** How long SIGTERM lets running jobs finish before releasing them (`DOCWRIGHT_SHUTDOWN_GRACE_SECONDS`, default 30). */
  shutdownGraceMs: number;
}

const positiveInt = z.coerce.number().int().positive();
const positiveNumber = z.coerce.number().positive();

const envSchema = z.object({
  DOCWRIGHT_DATA_DIR: z.string().min(1).default('./.docwright'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  DOCWRIGHT_DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
    .default('public'),
  DOCWRIGHT_SECRET_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  DOCWRIGHT_MODEL: z.string().min(1).optional(),
  DOCWRIGHT_PROMPT_MAX_CHARS: positiveInt.default(100_000),
  DOCWRIGHT_RATE_LIMIT: positiveInt.default(100),
  DOCWRIGHT_WORKER_CONCURRENCY: positiveInt.default(4),
  DOCWRIGHT_PROJECT_CONCURRENCY: positiveInt.default(5),
  DOCWRIGHT_LEASE_SECONDS: positiveNumber.default(60),
  DOCWRIGHT_MAX_ATTEMPTS: positiveInt.default(3),
  DOCWRIGHT_JOB_TIME_LIMIT_MINUTES: positiveNumber.default(20),
  DOCWRIGHT_SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).default(30),
  DOCWRIGHT_AGENT_MAX_STEPS: positiveInt.default(40),
  DOCWRIGHT_AGENT_MAX_TOKENS: positiveInt.default(400_000),
  DOCWRIGHT_AGENT_MAX_MINUTES: positiveNumber.default(10),
  DOCWRIGHT_AGENT_REPAIR_ROUNDS: z.coerce.number().int().min(0).default(3),
  DOCWRIGHT_ADMIN_EMAIL: z.string().min(1).default('admin@localhost'),
  DOCWRIGHT_ADMIN_PASSWORD: z.string().optional(),
  DOCWRIGHT_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** Reads and validates the configuration; a bad variable is named in the error. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => ({
      field: issue.path.join('.'),
      message: issue.message,
    }));
    throw new DocwrightError(
      'invalid-request',
      `invalid configuration: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`,
      { fields },
    );
  }
  const e = parsed.data;
  return {
    dataDir: path.resolve(e.DOCWRIGHT_DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.DOCWRIGHT_DATABASE_SCHEMA,
    secretKey: e.DOCWRIGHT_SECRET_KEY,
    defaultModel: e.DOCWRIGHT_MODEL,
    promptMaxChars: e.DOCWRIGHT_PROMPT_MAX_CHARS,
    defaultRateLimit: e.DOCWRIGHT_RATE_LIMIT,
    logLevel: e.DOCWRIGHT_LOG_LEVEL,
    admin: { email: e.DOCWRIGHT_ADMIN_EMAIL, password: e.DOCWRIGHT_ADMIN_PASSWORD || undefined },
    agent: {
      maxSteps: e.DOCWRIGHT_AGENT_MAX_STEPS,
      maxTokens: e.DOCWRIGHT_AGENT_MAX_TOKENS,
      maxDurationMs: e.DOCWRIGHT_AGENT_MAX_MINUTES * 60_000,
      maxRepairRounds: e.DOCWRIGHT_AGENT_REPAIR_ROUNDS,
    },
    worker: {
      concurrency: e.DOCWRIGHT_WORKER_CONCURRENCY,
      projectConcurrency: e.DOCWRIGHT_PROJECT_CONCURRENCY,
      leaseMs: e.DOCWRIGHT_LEASE_SECONDS * 1000,
      maxAttempts: e.DOCWRIGHT_MAX_ATTEMPTS,
      jobTimeLimitMs: e.DOCWRIGHT_JOB_TIME_LIMIT_MINUTES * 60_000,
      shutdownGraceMs: e.DOCWRIGHT_SHUTDOWN_GRACE_SECONDS * 1000,
    },
  };
}
