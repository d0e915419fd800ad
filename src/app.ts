import { type Automations, createAutomations } from './automations/automations-module.ts';
import type { ChangeDetailsOf } from './automations/change-listing.ts';
import { automationContexts, type ContextRepositories } from './automations/repositories.ts';
import type { Config } from './config.ts';
import {
  createPullRequestComments,
  type PullRequestComments,
} from './conversations/comments/comments-module.ts';
import type { DocsHost } from './conversations/comments/follow-ups.ts';
import type { SlackCommandWeb, SlackWeb } from './conversations/slack/slack-client.ts';
import { createSlack, type Slack } from './conversations/slack/slack-module.ts';
import { environmentSecrets } from './environment-secrets.ts';
import { DocwrightError } from './errors.ts';
import { MirrorCache } from './git/mirror.ts';
import { createJobHistory, type JobHistory } from './jobs/job-history.ts';
import { createJobPolls, type PollCache } from './jobs/job-polls.ts';
import { createJobService, type JobService } from './jobs/job-service.ts';
import { createKeyService, type KeyService } from './keys/keys.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { createFirstRunLinks, type FirstRunLinks } from './operators/first-run-links.ts';
import { createOperatorService, type OperatorService } from './operators/operators.ts';
import { createSessionService, type SessionService } from './operators/sessions.ts';
import { createSignInThrottle, type SignInThrottle } from './operators/sign-in-throttle.ts';
import { runningJobDefaults } from './processes/process-registry.ts';
import {
  type ContextRepositoryService,
  createContextRepositoryService,
} from './projects/context-repositories.ts';
import { createProjectService, type ProjectService } from './projects/projects.ts';
import { resolveSecretKey, SecretBox } from './projects/secret-box.ts';
import { processSecrets } from './redact.ts';
import { openStore, type Store } from './store/database.ts';
import { createSignals, type Signals } from './store/signals.ts';
import { createWebhookService, type WebhookService } from './webhooks/webhooks.ts';

/** Everything a process of docwright shares: configuration, database and services. */
export interface App {
  config: Config;
  store: Store;
  logger: Logger;
  projects: ProjectService;
  /** The code repositories each project's agent reads (docs/code-context.mdx). */
  contextRepositories: ContextRepositoryService;
  keys: KeyService;
  jobs: JobService;
  /** What the surfaces show of jobs beyond the AgentJob: runs, transcripts, diffs. */
  jobHistory: JobHistory;
  /** Answers to job polls, remembered while the database has not changed (jobs/job-polls.ts). */
  jobPolls: PollCache;
  /** The database as the readiness probe sees it: where it is, whether it answers and takes writes. */
  database: Pick<Store, 'location' | 'ping' | 'checkWritable'>;
  /** Dashboard accounts and their sign-in sessions. */
  operators: OperatorService;
  sessions: SessionService;
  /** The one-time link to the first account's page (the embedded default's first run). */
  firstRunLinks: FirstRunLinks;
  /** Failed dashboard sign-ins, counted across processes (docs/dashboard.mdx). */
  signInThrottle: SignInThrottle;
  /** Webhook endpoints and their deliveries (docs/webhooks.mdx). */
  webhooks: WebhookService;
  /** Automations, their runs and inbound code-host webhooks (docs/automations.mdx). */
  automations: Automations;
  /** The Slack app: channel links, stored events, threads and their status messages (docs/slack.mdx). */
  slack: Slack;
  /** Pull request comments that start follow-ups (docs/pull-request-comments.mdx). */
  comments: PullRequestComments;
  /** Wake-ups between processes (job queued, run cancelled, new events). */
  signals: Signals;
  metrics: Metrics;
  /** The clock every component reads (injectable for tests). */
  now: () => Date;
  close(): Promise<void>;
}

export interface OpenAppOptions {
  logger?: Logger;
  /** Apply pending migrations while opening (default true). */
  migrate?: boolean;
  /** Clock, injectable for tests. */
  now?: () => Date;
  /** The context repositories automations watch and their webhook secrets (tests). */
  contexts?: ContextRepositories;
  /** How automations read a change's commits and files (tests; default: through its host). */
  changeDetails?: ChangeDetailsOf;
  /**
   * Give new jobs the defaults of the running server (process-registry.ts: its `DOCWRIGHT_MODEL` and
   * `DOCWRIGHT_RATE_LIMIT`) instead of this process's: a command that creates work creates what
   * the server's API would, whatever its shell holds. Its own count only when no server runs.
   */
  serverDefaults?: boolean;
  /** The Slack Web API clients (tests; default: `@slack/web-api` with the bot token). */
  slackWeb?: { events: SlackWeb; commands: SlackCommandWeb };
  /** How pull request comments reach a project's host (tests; default: through its credentials). */
  commentHost?: (projectId: string) => Promise<DocsHost | undefined>;
}

export async function openApp(config: Config, options: OpenAppOptions = {}): Promise<App> {
  processSecrets.add(...environmentSecrets(process.env));
  const logger = options.logger ?? createLogger(config.logLevel);
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    databaseSchema: config.databaseSchema,
    dataDir: config.dataDir,
    migrate: options.migrate ?? true,
    onPoolError: (error) =>
      logger.warn({ err: { message: error.message } }, 'database connection lost; it will be replaced'),
  });
  let secretBox: SecretBox | undefined;
  const getSecretBox = () => {
    if (!secretBox) {
      const key = resolveSecretKey(config);
      if (!key) {
        throw new DocwrightError(
          'invalid-request',
          'DOCWRIGHT_SECRET_KEY must be set to store project credentials when DATABASE_URL is used',
        );
      }
      secretBox = new SecretBox(key);
    }
    return secretBox;
  };
  const now = options.now ?? (() => new Date());
  const operators = createOperatorService({ store, now });
  if (config.admin.password !== undefined && options.migrate !== false) {
    await createFirstOperator(operators, config.admin.email, config.admin.password, logger).catch(
      async (error) => {
        await store.close();
        throw error;
      },
    );
  }
  const signals = createSignals(store, {
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    logger,
  });
  const keys = createKeyService({ store, now, signals });
  const projects = createProjectService({
    store,
    secretBox: getSecretBox,
    now,
    signals,
    keys,
    mirrors: new MirrorCache(config.mirrors),
    allowLinkLocalRepositories: config.allowLinkLocalRepositories,
  });
  const contextRepositories = createContextRepositoryService({
    store,
    secretBox: getSecretBox,
    publicUrl: config.publicUrl,
    now,
    allowLinkLocalRepositories: config.allowLinkLocalRepositories,
  });
  const own = { model: config.defaultModel, rateLimit: config.defaultRateLimit };
  const defaults = options.serverDefaults
    ? await runningJobDefaults(store.db, now(), own).catch(async (error) => {
        await store.close();
        throw error;
      })
    : own;
  const jobs = createJobService({
    store,
    promptMaxChars: config.promptMaxChars,
    defaultRateLimit: defaults.rateLimit,
    defaultModel: defaults.model,
    now,
    publish: (signal) => signals.publish(signal),
  });
  const automations = createAutomations({
    store,
    jobs,
    projects,
    contexts: options.contexts ?? automationContexts(contextRepositories),
    logger,
    now,
    ...(options.changeDetails && { changeDetails: options.changeDetails }),
    allowLinkLocalRepositories: config.allowLinkLocalRepositories,
  });
  const comments = createPullRequestComments({
    store,
    jobs,
    projects,
    logger,
    now,
    config,
    ...(options.commentHost && { hostFor: options.commentHost }),
    hasDocsHook: async (projectId) =>
      (await automations.contexts.webhookSecretFor(projectId, 'docs')) !== undefined,
  });
  return {
    config,
    store,
    logger,
    projects,
    contextRepositories,
    keys,
    operators,
    sessions: createSessionService({ store, now }),
    signInThrottle: createSignInThrottle({ store, now }),
    firstRunLinks: createFirstRunLinks({ store, now }),
    webhooks: createWebhookService({
      store,
      secretBox: getSecretBox,
      allowPrivate: config.webhooks.allowPrivate,
      now,
    }),
    jobs,
    jobHistory: createJobHistory({ db: store.db, signals, now }),
    jobPolls: createJobPolls({ store, signals }),
    database: store,
    automations,
    comments,
    slack: createSlack({
      store,
      config,
      projects,
      jobs,
      logger,
      now,
      ...(options.slackWeb && { web: options.slackWeb }),
    }),
    signals,
    metrics: createMetrics(store),
    now,
    close: async () => {
      await signals.close();
      await store.close();
    },
  };
}

/** `DOCWRIGHT_ADMIN_PASSWORD`: the first account, when there is none. The password is never logged. */
async function createFirstOperator(
  operators: OperatorService,
  email: string,
  password: string,
  logger: Logger,
): Promise<void> {
  let created: Awaited<ReturnType<OperatorService['createFirst']>>;
  try {
    created = await operators.createFirst({ email, password });
  } catch (error) {
    if (error instanceof DocwrightError && error.fields) {
      // Name the variables, not the service's fields (and never echo the value).
      const names = { email: 'DOCWRIGHT_ADMIN_EMAIL', password: 'DOCWRIGHT_ADMIN_PASSWORD' };
      const message = error.fields
        .map((f) => `${names[f.field as keyof typeof names] ?? f.field} ${f.message}`)
        .join('; ');
      throw new DocwrightError('invalid-request', `invalid configuration: ${message}`, { cause: error });
    }
    throw error;
  }
  if (created) {
    logger.info(
      { operatorId: created.id, email: created.email },
      'created the first operator account from DOCWRIGHT_ADMIN_PASSWORD',
    );
  }
}
