/**
 * Creating a job on PostgreSQL in one round trip: one call of `create_job`
 * (src/store/migrations/0013-create-job-function.ts), which locks the project, checks and records the rate-limit
 * use, writes the job, its run, its event and its webhook outbox, all in the call's own
 * transaction; then the workers are told. The ordinary transaction (src/jobs/job-service.ts) took nine
 * round trips for the same.
 *
 * The rows are built from the project and its webhook endpoints as this process last read them
 * (one more round trip the first time, and whenever the function finds them changed: `stale`).
 * What is remembered needs no invalidation to be right: the function checks it under the lock.
 *
 * Only the plain create takes this way: one with an `Idempotency-Key`, with code changes (named,
 * or a URL in the prompt) or on a project with a monthly token budget needs reads under the
 * lock that the function does not do, and goes the ordinary way, as does a create that finds the
 * project changed between the read and the lock (`stale`).
 */
import { CompiledQuery } from 'kysely';
import { newRunId, newWebhookDeliveryId, newWebhookMessageId } from '../ids.ts';
import type { Store } from '../store/database.ts';
import type { ProjectRow } from '../store/schema.ts';
import type { Signal } from '../store/signals.ts';
import { newJobRow, toAgentJob } from './agent-job.ts';
import { rateLimitedError, stateAfterUse, windowStartOf } from './rate-limit.ts';
import { messageBody, subscribes } from './webhook-outbox.ts';
import type { JobWork } from './work-result.ts';

type ProjectWithEndpoints = Pick<ProjectRow, 'repository' | 'ref' | 'model' | 'settings'> & {
  /** The project's enabled webhook endpoints (json_agg, parsed by pg). */
  endpoints: { id: string; events: string }[];
};

const PROJECT_WITH_ENDPOINTS = `
  select p.repository, p.ref, p.model, p.settings,
         (select coalesce(json_agg(json_build_object('id', e.id, 'events', e.events)), '[]'::json)
            from webhook_endpoints e
           where e.project_id = p.id and e.disabled_at is null) as endpoints
    from projects p where p.id = $1`;

const CREATE_JOB = `select outcome, used, oldest, rate_limit from create_job(${Array.from(
  { length: 20 },
  (_, i) => `$${i + 1}`,
).join(', ')})`;

interface Outcome {
  outcome: 'created' | 'rate-limited' | 'stale';
  used: string;
  oldest: string | null;
  rate_limit: number;
}

export interface PostgresCreateOptions {
  store: Store;
  defaultRateLimit: number;
  /** Tells the workers after the commit (src/store/signals.ts). */
  publish: (signal: Signal) => Promise<void>;
  now: () => Date;
  /** The model a create asks for, checked against the project's (throws `invalid-request`). */
  chooseModel: (project: Pick<ProjectRow, 'model' | 'settings'>, requested: string | undefined) => string;
}

export interface PlainCreate {
  prompt: string;
  ref?: string | undefined;
  model?: string | undefined;
  draft?: boolean | undefined;
  headBranch?: string | undefined;
}

/** Projects remembered at most; past that the oldest is forgotten (read again when next needed). */
const MAX_PROJECTS = 10_000;

/** Creates the job, or answers undefined when it must be created the ordinary way. */
export function postgresCreate(options: PostgresCreateOptions) {
  const { store } = options;
  const prepared = store.prepared!;
  const projects = new Map<string, ProjectWithEndpoints>();

  async function readProject(projectId: string): Promise<ProjectWithEndpoints | undefined> {
    const [project] = await prepared<ProjectWithEndpoints>(
      CompiledQuery.raw(PROJECT_WITH_ENDPOINTS, [projectId]),
    );
    if (!project) return undefined;
    // Sorted as the function lists them; only those that want job.created matter here.
    project.endpoints = project.endpoints
      .filter((e) => subscribes(e.events, 'job.created'))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    if (projects.size >= MAX_PROJECTS) projects.delete(projects.keys().next().value!);
    projects.set(projectId, project);
    return project;
  }

  return async (projectId: string, body: PlainCreate): Promise<JobWork | undefined> => {
    const remembered = projects.get(projectId);
    let result = remembered ? await attempt(projectId, remembered, body, true) : 'stale';
    // Not known, or changed since it was read: with the project as it is now (twice at most: it
    // may change again between the read and the lock).
    for (let tries = 0; result === 'stale' && tries < 2; tries++) {
      const project = await readProject(projectId);
      result = project && (await attempt(projectId, project, body, false));
    }
    // No project (the ordinary way answers 404), one that needs the ordinary way, or changing under us.
    if (result === undefined || result === 'stale') {
      projects.delete(projectId);
      return undefined;
    }
    return result;
  };

  async function attempt(
    projectId: string,
    project: ProjectWithEndpoints,
    body: PlainCreate,
    /** The project is as this process remembered it, not as just read. */
    remembered: boolean,
  ): Promise<JobWork | 'stale' | undefined> {
    const budget = (JSON.parse(project.settings) as { monthlyTokenBudget?: number | null })
      .monthlyTokenBudget;
    if (budget) return undefined;
    let model: string;
    try {
      model = options.chooseModel(project, body.model);
    } catch (error) {
      // A model refused by settings remembered from before may be allowed now: read them again.
      if (remembered) return 'stale';
      throw error;
    }
    const at = options.now();
    const timestamp = at.toISOString();
    const row = newJobRow({
      projectId,
      repository: project.repository,
      ref: body.ref ?? project.ref,
      model,
      draft: body.draft,
      headBranch: body.headBranch,
      at,
    });
    const { endpoints } = project;
    const [result] = await prepared<Outcome>(
      CompiledQuery.raw(CREATE_JOB, [
        projectId,
        options.defaultRateLimit,
        project.repository,
        project.ref,
        project.model,
        project.settings,
        timestamp,
        windowStartOf(at),
        row.id,
        row.ref,
        row.model,
        row.draft,
        row.branch,
        newRunId(),
        body.prompt,
        JSON.stringify({ prompt: body.prompt, model: row.model, ref: row.ref }),
        newWebhookMessageId(),
        endpoints.length > 0 ? messageBody('job.created', row, timestamp) : '',
        endpoints.map((e) => e.id),
        endpoints.map(() => newWebhookDeliveryId()),
      ]),
    );
    if (!result || result.outcome === 'stale') return 'stale';
    const oldest = result.oldest ? Date.parse(result.oldest) : undefined;
    if (result.outcome === 'rate-limited') throw rateLimitedError(result.rate_limit, oldest, at);
    // Not awaited: the answer need not wait for the nudge (a worker also polls), and the NOTIFY may
    // queue behind another process's notifying commit.
    void options.publish({ kind: 'run-queued' });
    return {
      job: toAgentJob(row),
      created: true,
      rateLimit: stateAfterUse(result.rate_limit, Number(result.used), oldest, at),
      replayed: false,
    };
  }
}
