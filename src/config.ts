import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { type AgentBudgets, type AgentLimits, DEFAULT_BUDGETS, DEFAULT_LIMITS } from './agent/types.ts';
import { DocwrightError } from './errors.ts';

/** Server-wide settings, read from the environment once at start. */
/** An IPv4 or IPv6 address, optionally with a prefix length (`10.0.0.0/8`, `fd00::/8`). */
function isAddressOrRange(item: string): boolean {
  const [address = '', prefix, extra] = item.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

export interface Config {
  /**
   * Where the embedded default keeps its SQLite file and generated secret key:
   * `DOCWRIGHT_DATA_DIR`, else `$XDG_DATA_HOME/docwright` (`~/.local/share/docwright`), the same
   * from any working directory (docs/operations.mdx).
   */
  dataDir: string;
  /** Things about the configuration the operator should hear once at start (one line each). */
  notices: string[];
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
  /**
   * The dashboard's address as browsers reach it (`DOCWRIGHT_PUBLIC_URL`, e.g. behind a proxy):
   * the origin state-changing requests must come from, and `Secure` cookies when it is https.
   */
  publicUrl: string | undefined;
  /**
   * Which proxies in front of docwright to believe about the client's address
   * (`DOCWRIGHT_TRUST_PROXY`: a number of hops, or a comma-separated list of addresses and CIDR
   * ranges). Unset: the connection's own address, which behind a proxy is the proxy's, so that
   * the sign-in throttle would count every client as one.
   */
  trustProxy: number | string | undefined;
  worker: WorkerSettings;
  webhooks: WebhookSettings;
  /**
   * Allow repositories (the project's and context repositories) on link-local and cloud metadata
   * addresses (`DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1`; default off: src/git/repository-address.ts).
   */
  allowLinkLocalRepositories: boolean;
  /**
   * `DOCWRIGHT_AUTOMATION_POLL_SECONDS` (default 300; 0 turns it off): how often the repositories
   * that enabled automations watch are polled through their hosts' APIs (docs/automations.mdx).
   */
  automationPollSeconds: number;
  /** The Slack app (docs/slack.mdx); the Slack routes answer 404 without a signing secret. */
  slack: SlackSettings;
  /**
   * `DOCWRIGHT_MENTION` (default `docwright`): the name a pull request comment mentions
   * (`@docwright`) to ask for a follow-up (docs/pull-request-comments.mdx).
   */
  mention: string;
  /** Bounds on Server-Sent Events streams (see src/http/server-sent-events.ts). */
  streams: StreamLimits;
  /** Budgets of one agent run (docs/agent.mdx; see AgentBudgets). */
  agent: AgentBudgets;
  /** Caps the agent's tools enforce (see AgentLimits). */
  agentLimits: AgentLimits;
  /** Bounds on the process each run's agent executes in (see src/pipeline/agent-process.ts). */
  agentProcess: AgentProcessLimits;
  /** The mirror cache runs make their checkouts from (see src/git/mirror.ts). */
  mirrors: MirrorSettings;
}

/** The one Slack app of a deployment (docs/slack.mdx). Secrets: never logged, never in an answer. */
export interface SlackSettings {
  /** `DOCWRIGHT_SLACK_SIGNING_SECRET`: verifies Slack's requests; unset, the Slack routes answer 404. */
  signingSecret: string | undefined;
  /** `DOCWRIGHT_SLACK_BOT_TOKEN` (`xoxb-…`): what the app answers in Slack with. */
  botToken: string | undefined;
  /** `DOCWRIGHT_SLACK_API_URL` (default Slack's own, `https://slack.com/api/`), for tests and proxies. */
  apiUrl: string;
}

/** Slack's Web API. */
export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

/** Where project mirrors are kept, and how much room they may take. */
export interface MirrorSettings {
  /** Folder of the mirrors (`DOCWRIGHT_MIRROR_DIR`, default `<data dir>/mirrors`). */
  dir: string;
  /** Size of all idle mirrors before the least recently used are removed (`DOCWRIGHT_MIRROR_MAX_MB`, default 5120; 0 keeps none between runs). */
  maxBytes: number;
}

/** How workers run jobs (docs/worker.mdx). */
export interface WorkerSettings {
  /** Runs one worker process executes at once (`DOCWRIGHT_WORKER_CONCURRENCY`, default 4). */
  concurrency: number;
  /** Runs of one project executing at once across all workers (`DOCWRIGHT_PROJECT_CONCURRENCY`, default 5). */
  projectConcurrency: number;
  /** Lease on a claimed run, renewed every third of it (`DOCWRIGHT_LEASE_SECONDS`, default 60). */
  leaseMs: number;
  /** Claims before a run whose worker keeps vanishing fails with `worker-lost` (`DOCWRIGHT_MAX_ATTEMPTS`, default 3). */
  maxAttempts: number;
  /** Longest a run may go on from when it first started (`DOCWRIGHT_JOB_TIME_LIMIT_MINUTES`, default 20). */
  jobTimeLimitMs: number;
  /** Longest a run may wait in the queue before it first starts (`DOCWRIGHT_QUEUE_TIME_LIMIT_MINUTES`, default 60). */
  queueTimeLimitMs: number;
  /** How long SIGTERM lets running jobs finish before releasing them (`DOCWRIGHT_SHUTDOWN_GRACE_SECONDS`, default 30). */
  shutdownGraceMs: number;
}

/** How webhooks are sent (docs/webhooks.mdx). */
export interface WebhookSettings {
  /**
   * Allow endpoints on loopback, private, link-local and metadata addresses
   * (`DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1`; default off, so that a project's endpoint cannot
   * reach the service's own network).
   */
  allowPrivate: boolean;
}

/** Bounds on the event streams of one process (src/http/server-sent-events.ts). */
export interface StreamLimits {
  /** Streams one owner (API key or dashboard session) may hold open at once (`DOCWRIGHT_STREAMS_PER_KEY`, default 10). */
  perOwner: number;
  /** Streams the process serves at once (`DOCWRIGHT_STREAMS_PER_PROCESS`, default 500). */
  perProcess: number;
  /** Unread bytes a client may leave queued before it is disconnected (default 256 KiB). */
  maxBufferBytes: number;
  /** How long a producer waits for a full socket to drain before the client is disconnected (default 30 s). */
  drainTimeoutMs: number;
  /** Interval of the keep-alive comment that keeps proxies from closing an idle stream (default 15 s). */
  keepAliveMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  perOwner: 10,
  perProcess: 500,
  maxBufferBytes: 256 * 1024,
  drainTimeoutMs: 30_000,
  keepAliveMs: 15_000,
};

/** Bounds on the process of one run (src/pipeline/agent-process.ts). */
export interface AgentProcessLimits {
  /** Heap (V8's cap) of one run's process in MiB (`DOCWRIGHT_RUN_MEMORY_MB`, default 512). */
  memoryMb: number;
  /**
   * Resident memory of the process in MiB, checked by a watchdog: what the heap cap does not
   * count (code, buffers, the young generation) is bounded too. Default: 1.5 × `memoryMb`.
   */
  residentMb?: number;
  /** How long the process may leave its heartbeat unanswered before it is killed, in ms (default 30 s). */
  unresponsiveMs: number;
}

export const DEFAULT_AGENT_PROCESS_LIMITS: AgentProcessLimits = { memoryMb: 512, unresponsiveMs: 30_000 };

const positiveInt = z.coerce.number().int().positive();
const positiveNumber = z.coerce.number().positive();

const envSchema = z.object({
  DOCWRIGHT_DATA_DIR: z.string().min(1).optional(),
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
  DOCWRIGHT_QUEUE_TIME_LIMIT_MINUTES: positiveNumber.default(60),
  DOCWRIGHT_SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).default(30),
  DOCWRIGHT_AGENT_MAX_STEPS: positiveInt.default(40),
  DOCWRIGHT_AGENT_MAX_TOKENS: positiveInt.default(400_000),
  DOCWRIGHT_AGENT_MAX_MINUTES: positiveNumber.default(10),
  DOCWRIGHT_AGENT_REPAIR_ROUNDS: z.coerce.number().int().min(0).default(3),
  DOCWRIGHT_AGENT_MAX_TOOL_CALLS_PER_TURN: positiveInt.default(DEFAULT_BUDGETS.maxToolCallsPerTurn),
  DOCWRIGHT_AGENT_MAX_EVENTS: positiveInt.default(DEFAULT_BUDGETS.maxEvents),
  DOCWRIGHT_AGENT_MAX_CHANGED_FILES: positiveInt.default(DEFAULT_LIMITS.maxChangedFiles),
  DOCWRIGHT_AGENT_TOOL_SECONDS: positiveNumber.default(DEFAULT_LIMITS.maxToolMs / 1000),
  DOCWRIGHT_RUN_MEMORY_MB: z.coerce.number().int().min(64).default(DEFAULT_AGENT_PROCESS_LIMITS.memoryMb),
  DOCWRIGHT_RUN_UNRESPONSIVE_SECONDS: positiveNumber.optional(),
  DOCWRIGHT_MIRROR_DIR: z.string().min(1).optional(),
  DOCWRIGHT_MIRROR_MAX_MB: z.coerce.number().min(0).default(5120),
  DOCWRIGHT_ADMIN_EMAIL: z.string().min(1).default('admin@localhost'),
  DOCWRIGHT_ADMIN_PASSWORD: z.string().optional(),
  DOCWRIGHT_PUBLIC_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  DOCWRIGHT_TRUST_PROXY: z
    .string()
    .refine(
      (value) => /^\d{1,2}$/.test(value) || value.split(',').every((item) => isAddressOrRange(item.trim())),
      'must be a number of hops or a comma-separated list of IP addresses and CIDR ranges',
    )
    .optional(),
  DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE: z
    .enum(['0', '1', 'true', 'false', ''], { error: 'must be 1 or 0' })
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL: z
    .enum(['0', '1', 'true', 'false', ''], { error: 'must be 1 or 0' })
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  DOCWRIGHT_MENTION: z
    .string()
    .regex(/^@?[A-Za-z0-9][A-Za-z0-9_.-]{0,98}$/, 'must be a user name (letters, digits, _ . -)')
    .default('docwright'),
  DOCWRIGHT_AUTOMATION_POLL_SECONDS: z.coerce
    .number({ error: 'must be a whole number of seconds (0 turns polling off)' })
    .int('must be a whole number of seconds (0 turns polling off)')
    .min(0)
    .max(86_400)
    .default(300),
  DOCWRIGHT_SLACK_SIGNING_SECRET: z.string().optional(),
  DOCWRIGHT_SLACK_BOT_TOKEN: z.string().optional(),
  DOCWRIGHT_SLACK_API_URL: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .default(DEFAULT_SLACK_API_URL),
  DOCWRIGHT_STREAMS_PER_KEY: positiveInt.default(DEFAULT_STREAM_LIMITS.perOwner),
  DOCWRIGHT_STREAMS_PER_PROCESS: positiveInt.default(DEFAULT_STREAM_LIMITS.perProcess),
  DOCWRIGHT_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** Reads and validates the configuration; a bad variable is named in the error. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Config {
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
  const { dataDir, notices } = dataDirectory(e.DOCWRIGHT_DATA_DIR, env, cwd);
  return {
    dataDir,
    notices,
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.DOCWRIGHT_DATABASE_SCHEMA,
    secretKey: e.DOCWRIGHT_SECRET_KEY,
    defaultModel: e.DOCWRIGHT_MODEL,
    promptMaxChars: e.DOCWRIGHT_PROMPT_MAX_CHARS,
    defaultRateLimit: e.DOCWRIGHT_RATE_LIMIT,
    logLevel: e.DOCWRIGHT_LOG_LEVEL,
    admin: { email: e.DOCWRIGHT_ADMIN_EMAIL, password: e.DOCWRIGHT_ADMIN_PASSWORD || undefined },
    publicUrl: e.DOCWRIGHT_PUBLIC_URL,
    trustProxy:
      e.DOCWRIGHT_TRUST_PROXY === undefined
        ? undefined
        : /^\d+$/.test(e.DOCWRIGHT_TRUST_PROXY)
          ? Number(e.DOCWRIGHT_TRUST_PROXY)
          : e.DOCWRIGHT_TRUST_PROXY.replace(/\s+/g, ''),
    slack: {
      signingSecret: e.DOCWRIGHT_SLACK_SIGNING_SECRET?.trim() || undefined,
      botToken: e.DOCWRIGHT_SLACK_BOT_TOKEN?.trim() || undefined,
      // The client appends method names to it: it must end with a slash.
      apiUrl: e.DOCWRIGHT_SLACK_API_URL.endsWith('/')
        ? e.DOCWRIGHT_SLACK_API_URL
        : `${e.DOCWRIGHT_SLACK_API_URL}/`,
    },
    streams: {
      ...DEFAULT_STREAM_LIMITS,
      perOwner: e.DOCWRIGHT_STREAMS_PER_KEY,
      perProcess: e.DOCWRIGHT_STREAMS_PER_PROCESS,
    },
    agent: {
      maxSteps: e.DOCWRIGHT_AGENT_MAX_STEPS,
      maxTokens: e.DOCWRIGHT_AGENT_MAX_TOKENS,
      maxDurationMs: e.DOCWRIGHT_AGENT_MAX_MINUTES * 60_000,
      maxRepairRounds: e.DOCWRIGHT_AGENT_REPAIR_ROUNDS,
      maxToolCallsPerTurn: e.DOCWRIGHT_AGENT_MAX_TOOL_CALLS_PER_TURN,
      maxEvents: e.DOCWRIGHT_AGENT_MAX_EVENTS,
    },
    agentLimits: {
      ...DEFAULT_LIMITS,
      maxChangedFiles: e.DOCWRIGHT_AGENT_MAX_CHANGED_FILES,
      maxToolMs: e.DOCWRIGHT_AGENT_TOOL_SECONDS * 1000,
    },
    agentProcess: {
      memoryMb: e.DOCWRIGHT_RUN_MEMORY_MB,
      // By default a process is killed only when even a tool call's own deadline has long passed.
      unresponsiveMs:
        e.DOCWRIGHT_RUN_UNRESPONSIVE_SECONDS !== undefined
          ? e.DOCWRIGHT_RUN_UNRESPONSIVE_SECONDS * 1000
          : Math.max(DEFAULT_AGENT_PROCESS_LIMITS.unresponsiveMs, 3 * e.DOCWRIGHT_AGENT_TOOL_SECONDS * 1000),
    },
    mirrors: {
      dir: e.DOCWRIGHT_MIRROR_DIR ? path.resolve(cwd, e.DOCWRIGHT_MIRROR_DIR) : path.join(dataDir, 'mirrors'),
      maxBytes: Math.round(e.DOCWRIGHT_MIRROR_MAX_MB * 1024 * 1024),
    },
    webhooks: { allowPrivate: e.DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE },
    allowLinkLocalRepositories: e.DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL,
    automationPollSeconds: e.DOCWRIGHT_AUTOMATION_POLL_SECONDS,
    mention: e.DOCWRIGHT_MENTION.replace(/^@/, ''),
    worker: {
      concurrency: e.DOCWRIGHT_WORKER_CONCURRENCY,
      projectConcurrency: e.DOCWRIGHT_PROJECT_CONCURRENCY,
      leaseMs: e.DOCWRIGHT_LEASE_SECONDS * 1000,
      maxAttempts: e.DOCWRIGHT_MAX_ATTEMPTS,
      jobTimeLimitMs: e.DOCWRIGHT_JOB_TIME_LIMIT_MINUTES * 60_000,
      queueTimeLimitMs: e.DOCWRIGHT_QUEUE_TIME_LIMIT_MINUTES * 60_000,
      shutdownGraceMs: e.DOCWRIGHT_SHUTDOWN_GRACE_SECONDS * 1000,
    },
  };
}

/** Where docwright ≤ 0.1 kept its data: `./.docwright`, relative to whichever directory it ran in. */
const LEGACY_DATA_DIR = '.docwright';

/**
 * The data directory and what to tell the operator about it. A database that an earlier version
 * left in `.docwright` of this directory or one above it (where `npm start` in a checkout put it)
 * is used, with a notice, rather than silently replaced by an empty one: until it is moved, the
 * server and the CLI find it only from inside that tree.
 */
function dataDirectory(
  configured: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): { dataDir: string; notices: string[] } {
  if (configured) return { dataDir: path.resolve(cwd, configured), notices: [] };
  // The XDG spec ignores a relative XDG_DATA_HOME.
  const xdg = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : undefined;
  const standard = path.join(xdg ?? path.join(env.HOME || homedir(), '.local', 'share'), 'docwright');
  const legacy = findLegacyDataDir(cwd);
  if (!legacy || legacy === standard) return { dataDir: standard, notices: [] };
  if (existsSync(path.join(standard, 'docwright.db'))) {
    return {
      dataDir: standard,
      notices: [
        `ignoring ${legacy}, left by an earlier docwright: the data directory is ${standard} (set DOCWRIGHT_DATA_DIR=${legacy} to use the old one)`,
      ],
    };
  }
  return {
    dataDir: legacy,
    notices: [
      `using ${legacy}, left by an earlier docwright; to use it from any directory, move it: mkdir -p ${path.dirname(standard)} && mv ${legacy} ${standard} (or set DOCWRIGHT_DATA_DIR)`,
    ],
  };
}

function findLegacyDataDir(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, LEGACY_DATA_DIR);
    if (existsSync(path.join(candidate, 'docwright.db'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}
