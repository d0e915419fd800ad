/**
 * The automation service (docs/automations.mdx): automations of a project, their runs, and the firing of
 * runs — for a change (webhook or poll), a scheduled time, or a manual trigger — each exactly
 * once by its keys (run-store.ts), each starting a job that carries its changes. Surfaces (API,
 * dashboard, CLI, hooks) call this; it owns the SQL of its tables.
 */
import type { Kysely } from 'kysely';
import { DocwrightError, isDocwrightError, type RateLimitState } from '../errors.ts';
import { isAutomationId, newAutomationId } from '../ids.ts';
import { changesInput } from '../jobs/changes.ts';
import { requestFingerprint } from '../jobs/idempotency.ts';
import type { JobService } from '../jobs/job-service.ts';
import type { Logger } from '../logger.ts';
import type { ProjectService } from '../projects/projects.ts';
import type { AutomationTable } from '../store/automation-schema.ts';
import type { Database } from '../store/schema.ts';
import { parseOrThrow } from '../validation.ts';
import {
  type Automation,
  type AutomationRun,
  parseAutomation,
  parseAutomationUpdate,
  type RunChange,
  type Trigger,
  unknownRepositories,
} from './automation.ts';
import { type ChangeDetailsOf, changeDetailsThroughHost } from './change-listing.ts';
import { type ChangeFacts, type ChangeVerdict, judgeChange } from './filters.ts';
import type { ContextRepositories } from './repositories.ts';
import { recordRun, selectRuns, settleRun, toRun } from './run-store.ts';

export interface AutomationServiceOptions {
  store: { db: Kysely<Database> };
  jobs: JobService;
  projects: ProjectService;
  contexts: ContextRepositories;
  logger: Logger;
  now: () => Date;
  /**
   * A change's commits and files, for loop safety and automations with `paths` (default: through
   * the repository's host).
   */
  changeDetails?: ChangeDetailsOf;
  /** `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`: see git/repository-address.ts. */
  allowLinkLocalRepositories?: boolean;
}

/** A change as it arrived (webhook or poll), ready to be judged by each automation. */
export interface ChangeArrival {
  projectId: string;
  /** Its run keys (dedupe.ts). */
  keys: string[];
  facts: ChangeFacts;
  /** What the job carries. */
  change: RunChange;
  /** When it landed, when known (a poll, a merge's webhook): automations created later never run for it. */
  landedAt: string | null;
}

export interface RunsPage {
  runs: AutomationRun[];
  nextCursor: string | null;
}

const MAX_RUNS_PAGE = 100;
const DEFAULT_RUNS_PAGE = 20;

export type AutomationService = ReturnType<typeof createAutomationService>;

const toAutomation = (row: AutomationTable): Automation => ({
  id: row.id,
  name: row.name,
  trigger: JSON.parse(row.trigger) as Trigger,
  instruction: row.instruction,
  draft: Number(row.draft) === 1,
  enabled: Number(row.enabled) === 1,
  createdAt: row.created_at,
});

export function createAutomationService(options: AutomationServiceOptions) {
  const { db } = options.store;
  const log = options.logger;
  const changeDetails = options.changeDetails ?? changeDetailsThroughHost(options);

  /**
   * The arrival with what the filters need of its change and the event did not give, looked up
   * once and only when an automation would run it: its commits (a merged pull request's event
   * lists none; loop safety reads them) and, for `paths`, its files. A host that cannot say
   * leaves them unknown: the commits then show nothing is docwright's, the filter lets it by.
   */
  async function withDetails(arrival: ChangeArrival, files: boolean): Promise<ChangeArrival> {
    const { facts } = arrival;
    try {
      const found = await changeDetails(arrival.projectId, arrival.change, { files });
      if (!found) return arrival;
      const commits = facts.commitsComplete === false ? found : facts;
      return {
        ...arrival,
        facts: {
          ...facts,
          ...(files && facts.files === null && { files: found.files, filesComplete: found.complete }),
          commits: commits.commits,
          commitsComplete: commits.commitsComplete,
        },
      };
    } catch (error) {
      log.warn(
        {
          projectId: arrival.projectId,
          repository: arrival.change.repository,
          err: { message: (error as Error).message },
        },
        'could not read the commits or files of a change; it is judged on what its event said',
      );
      return arrival;
    }
  }

  async function mustGetRow(projectId: string, id: string): Promise<AutomationTable> {
    const row = isAutomationId(id)
      ? await db
          .selectFrom('automations')
          .selectAll()
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .executeTakeFirst()
      : undefined;
    if (!row)
      throw new DocwrightError('automation-not-found', `automation ${id} does not exist in this project`);
    return row;
  }

  async function checkRepositories(projectId: string, trigger: Trigger): Promise<void> {
    const names = (await options.contexts.accessFor(projectId)).map((r) => r.name);
    const fields = unknownRepositories(trigger, names);
    if (fields.length > 0) {
      throw new DocwrightError(
        'invalid-request',
        `invalid request: ${fields[0]!.field} ${fields[0]!.message}`,
        {
          fields,
        },
      );
    }
  }

  /**
   * Starts the job of a run recorded `running`: a job whose Idempotency-Key is the run's id, so
   * that starting it again (after a crash) creates nothing new. Past the project's rate limit the
   * run is `skipped` (`rate-limited`); any other refusal makes it `failed` with the error's code.
   */
  async function startJob(projectId: string, automation: Automation, runId: string, changes: RunChange[]) {
    const body = {
      prompt: automation.instruction,
      ...(changes.length > 0 && { changes }),
      ...(automation.draft && { draft: true }),
    };
    const key = `automation-run:${runId}`;
    try {
      const { job, rateLimit } = await options.jobs.create(projectId, body, {
        key,
        fingerprint: requestFingerprint('POST', `/automations/${automation.id}/runs/${runId}`, body),
      });
      await settleRun(db, runId, { jobId: job.id });
      return { jobId: job.id, rateLimit };
    } catch (error) {
      if (!isDocwrightError(error) || error.status >= 500) throw error;
      const skipped = error.code === 'rate-limited';
      log.info({ runId, automationId: automation.id, code: error.code }, 'automation run started no job');
      await settleRun(db, runId, {
        outcome: skipped ? 'skipped' : 'failed',
        reason: skipped ? 'rate-limited' : error.code,
      });
      return { error };
    }
  }

  async function automationsOf(projectId: string): Promise<Automation[]> {
    const rows = await db
      .selectFrom('automations')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toAutomation);
  }

  return {
    /** The project's automations, newest first (`project-not-found` for an unknown project). */
    async list(projectId: string): Promise<Automation[]> {
      await options.projects.get(projectId);
      return automationsOf(projectId);
    },

    async get(projectId: string, id: string): Promise<Automation> {
      return toAutomation(await mustGetRow(projectId, id));
    },

    async create(projectId: string, input: unknown): Promise<Automation> {
      const settings = parseAutomation(input);
      await options.projects.get(projectId);
      await checkRepositories(projectId, settings.trigger);
      const at = options.now().toISOString();
      const row: AutomationTable = {
        id: newAutomationId(),
        project_id: projectId,
        name: settings.name,
        trigger: JSON.stringify(settings.trigger),
        instruction: settings.instruction,
        draft: Number(settings.draft),
        enabled: Number(settings.enabled),
        // Earlier scheduled times never fire.
        handled_through: settings.trigger.type === 'schedule' ? at : null,
        created_at: at,
        updated_at: at,
      };
      await db.insertInto('automations').values(row).execute();
      return toAutomation(row);
    },

    async update(projectId: string, id: string, input: unknown): Promise<Automation> {
      const change = parseAutomationUpdate(input);
      const row = await mustGetRow(projectId, id);
      if (change.trigger) await checkRepositories(projectId, change.trigger);
      const at = options.now().toISOString();
      const trigger = change.trigger ?? (JSON.parse(row.trigger) as Trigger);
      const enabling = change.enabled === true && Number(row.enabled) === 0;
      const next: Partial<AutomationTable> = {
        ...(change.name !== undefined && { name: change.name }),
        ...(change.instruction !== undefined && { instruction: change.instruction }),
        ...(change.draft !== undefined && { draft: Number(change.draft) }),
        ...(change.enabled !== undefined && { enabled: Number(change.enabled) }),
        ...(change.trigger && { trigger: JSON.stringify(change.trigger) }),
        // A schedule (re)enabled or replaced starts from now: times passed meanwhile never fire.
        ...((enabling || change.trigger) && { handled_through: trigger.type === 'schedule' ? at : null }),
        updated_at: at,
      };
      await db.updateTable('automations').set(next).where('id', '=', row.id).execute();
      return toAutomation({ ...row, ...next });
    },

    async delete(projectId: string, id: string): Promise<Automation> {
      const row = await mustGetRow(projectId, id);
      await db.deleteFrom('automations').where('id', '=', row.id).execute();
      return toAutomation(row);
    },

    /** Runs of an automation, newest first; `cursor` from the previous page's `nextCursor`. */
    async runs(
      projectId: string,
      id: string,
      query: { limit?: unknown; cursor?: unknown } = {},
    ): Promise<RunsPage> {
      const row = await mustGetRow(projectId, id);
      const limit = parseLimit(query.limit);
      const before = parseCursor(query.cursor);
      let select = selectRuns(db).where('r.automation_id', '=', row.id);
      if (before) select = select.where('r.id', '<', before);
      const rows = await select
        .orderBy('r.id', 'desc')
        .limit(limit + 1)
        .execute();
      const page = rows.slice(0, limit).map(toRun);
      const nextCursor = rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null;
      return { runs: page, nextCursor };
    },

    /** The latest run of each of the project's automations (the dashboard's list). */
    async latestRuns(projectId: string): Promise<Map<string, AutomationRun>> {
      const latest = new Map<string, AutomationRun>();
      for (const automation of await automationsOf(projectId)) {
        const row = await selectRuns(db)
          .where('r.automation_id', '=', automation.id)
          .orderBy('r.id', 'desc')
          .limit(1)
          .executeTakeFirst();
        if (row) latest.set(automation.id, toRun(row));
      }
      return latest;
    },

    /**
     * A manual run (API `trigger`, `Run now`, the CLI, Mintlify's workflow trigger): always a new
     * run and job, whatever the trigger type, with the changes given.
     */
    async trigger(
      projectId: string,
      id: string,
      body: unknown,
    ): Promise<{
      automationId: string;
      runId: string;
      jobId: string;
      run: AutomationRun;
      rateLimit: RateLimitState;
    }> {
      const automation = toAutomation(await mustGetRow(projectId, id));
      const changes = parseTriggerBody(body);
      const at = options.now();
      const { id: runId } = await recordRun(db, [`manual:${at.toISOString()}:${Math.random()}`], {
        automationId: automation.id,
        projectId,
        triggerType: 'manual',
        changes,
        scheduledFor: null,
        outcome: 'running',
        reason: null,
        at,
      });
      const started = await startJob(projectId, automation, runId, changes);
      // The run is recorded (skipped or failed, with the reason); the caller learns why.
      if ('error' in started) throw started.error;
      const run = toRun(await selectRuns(db).where('r.id', '=', runId).executeTakeFirstOrThrow());
      return { automationId: automation.id, runId, jobId: started.jobId, run, rateLimit: started.rateLimit };
    },

    /**
     * A change that landed: one run per automation that watches it (skipped with the reason when
     * a filter says so), each once however often the change arrives. Returns the runs created.
     */
    async fireForChange(arrival: ChangeArrival): Promise<string[]> {
      const project = await options.projects.get(arrival.projectId);
      const created: string[] = [];
      const judge = { branchPrefix: project.settings.branchPrefix };
      const automations = await automationsOf(arrival.projectId);
      // One look at the host per change, with its files when any automation filters by paths.
      let detailed: ChangeArrival | undefined;
      const withFiles = automations.some(hasPaths);
      for (const automation of automations) {
        if (arrival.landedAt !== null && arrival.landedAt < automation.createdAt) continue;
        let verdict = judgeChange(automation, arrival.facts, judge);
        if (needsDetails(automation, verdict, arrival.facts)) {
          detailed ??= await withDetails(arrival, withFiles);
          verdict = judgeChange(automation, detailed.facts, judge);
        }
        if (verdict.verdict === 'unwatched') continue;
        const run = await recordRun(db, arrival.keys, {
          automationId: automation.id,
          projectId: arrival.projectId,
          triggerType: automation.trigger.type,
          changes: [arrival.change],
          scheduledFor: null,
          outcome: verdict.verdict === 'run' ? 'running' : 'skipped',
          reason: verdict.verdict === 'skip' ? verdict.reason : null,
          at: options.now(),
        });
        if (!run.created) continue;
        created.push(run.id);
        if (verdict.verdict === 'run')
          await startJob(arrival.projectId, automation, run.id, [arrival.change]);
      }
      return created;
    },

    /**
     * Records the run of a schedule for `scheduledFor` (once, by its key), and starts its job
     * unless it is skipped or carries no change of a batch. Returns the run created, or null.
     */
    async fireScheduled(
      automation: Automation & { projectId: string },
      scheduledFor: Date,
      decision: { skip: 'missed' } | { changes: RunChange[] | null },
    ): Promise<string | null> {
      const empty = 'changes' in decision && decision.changes !== null && decision.changes.length === 0;
      const run = await recordRun(db, [`schedule:${scheduledFor.toISOString()}`], {
        automationId: automation.id,
        projectId: automation.projectId,
        triggerType: 'schedule',
        changes: 'changes' in decision ? (decision.changes ?? []) : [],
        scheduledFor,
        outcome: 'skip' in decision ? 'skipped' : empty ? 'no-changes-needed' : 'running',
        reason: 'skip' in decision ? decision.skip : null,
        at: options.now(),
      });
      await db
        .updateTable('automations')
        .set({ handled_through: scheduledFor.toISOString() })
        .where('id', '=', automation.id)
        .where('handled_through', '<', scheduledFor.toISOString())
        .execute();
      if (!run.created) return null;
      if ('changes' in decision && !empty) {
        await startJob(automation.projectId, automation, run.id, decision.changes ?? []);
      }
      return run.id;
    },

    /** Enabled schedules of every project, with the latest time each has handled. */
    async schedules(): Promise<(Automation & { projectId: string; handledThrough: Date })[]> {
      const rows = await db.selectFrom('automations').selectAll().where('enabled', '=', 1).execute();
      return rows
        .map((row) => ({
          ...toAutomation(row),
          projectId: row.project_id,
          handledThrough: new Date(row.handled_through ?? row.created_at),
        }))
        .filter((a) => a.trigger.type === 'schedule');
    },

    /** Enabled automations of every project that changes start, for the polling fallback. */
    async watching(): Promise<(Automation & { projectId: string })[]> {
      const rows = await db.selectFrom('automations').selectAll().where('enabled', '=', 1).execute();
      return rows
        .map((row) => ({ ...toAutomation(row), projectId: row.project_id }))
        .filter((a) => a.trigger.type === 'code-change' || a.trigger.type === 'docs-push');
    },

    /**
     * Runs recorded `running` whose job was never created (the process stopped in between),
     * older than `olderThanMs`: their jobs are started now (once: the run id is the job's
     * Idempotency-Key).
     */
    async resumeRuns(olderThanMs = 60_000): Promise<number> {
      const before = new Date(options.now().getTime() - olderThanMs).toISOString();
      const rows = await db
        .selectFrom('automation_runs as r')
        .innerJoin('automations as a', 'a.id', 'r.automation_id')
        .selectAll('a')
        .select(['r.id as run_id', 'r.changes as run_changes'])
        .where('r.outcome', '=', 'running')
        .where('r.job_id', 'is', null)
        .where('r.created_at', '<', before)
        .limit(50)
        .execute();
      for (const row of rows) {
        await startJob(
          row.project_id,
          toAutomation(row),
          row.run_id,
          JSON.parse(row.run_changes) as RunChange[],
        );
      }
      return rows.length;
    },
  };
}

/** Whether the automation filters by `paths`. */
const hasPaths = (automation: Automation): boolean =>
  'paths' in automation.trigger && automation.trigger.paths.length > 0;

/**
 * Whether a verdict on what the event said may change with the change's commits or files: a run
 * or a `label` skip may still be docwright's own change (checked first) while its commits are
 * unknown, and a run may touch none of `paths` while its files are unknown.
 */
function needsDetails(automation: Automation, verdict: ChangeVerdict, facts: ChangeFacts): boolean {
  const commitsUnknown = facts.commitsComplete === false;
  if (verdict.verdict === 'skip') return verdict.reason === 'label' && commitsUnknown;
  if (verdict.verdict !== 'run') return false;
  return commitsUnknown || (facts.files === null && hasPaths(automation));
}

function parseLimit(value: unknown): number {
  if (value === undefined) return DEFAULT_RUNS_PAGE;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_RUNS_PAGE) {
    const message = `must be a whole number from 1 to ${MAX_RUNS_PAGE}`;
    throw new DocwrightError('invalid-request', `query.limit ${message}`, {
      fields: [{ field: 'query.limit', message }],
    });
  }
  return n;
}

function parseCursor(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const id = typeof value === 'string' ? Buffer.from(value, 'base64url').toString() : '';
  if (!/^arun_[0-9a-z]{26}$/.test(id)) {
    throw new DocwrightError('invalid-cursor', 'cursor is not one this server returned', {
      fields: [{ field: 'query.cursor', message: 'is not a cursor this server returned' }],
    });
  }
  return id;
}

/** A trigger's body: nothing, `{}`, or `{"changes": [...]}` as the job's `changes` take them. */
function parseTriggerBody(body: unknown): RunChange[] {
  if (body === undefined || body === null) return [];
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new DocwrightError('invalid-request', 'invalid request: the body must be a JSON object', {
      fields: [{ field: 'body', message: 'must be a JSON object' }],
    });
  }
  const { changes, ...rest }: Record<string, unknown> = { ...body };
  const unknown = Object.keys(rest);
  if (unknown.length > 0) {
    const fields = unknown.map((field) => ({ field, message: 'is not a field of a trigger' }));
    throw new DocwrightError(
      'invalid-request',
      `invalid request: ${unknown[0]} is not a field of a trigger`,
      {
        fields,
      },
    );
  }
  if (changes === undefined) return [];
  // Their shape here, before a run is recorded; their repositories by the job's create.
  return parseOrThrow(changesInput, changes, 'changes') as RunChange[];
}
