/**
 * The runs of automations in the database: recording a run exactly once by its keys (dedupe.ts),
 * and reading runs with the outcome their job gives them.
 *
 * A run's keys are inserted before the run, sorted, with `on conflict do nothing`: the unique
 * index on (automation, key) decides between processes. When every key was new, this call owns
 * the change and inserts the run; when any key was there, the change is known, the keys that
 * were new are moved to the run found, and nothing is created. On PostgreSQL a second process
 * inserting a key the first holds uncommitted waits for the first's commit, then finds its row;
 * sorting the keys makes every process take them in one order, so that two cannot deadlock.
 */
import type { Kysely } from 'kysely';
import { newAutomationRunId } from '../ids.ts';
import type { Database } from '../store/schema.ts';
import type { AutomationRun, RunChange, RunOutcome, TriggerType } from './automation.ts';

export interface NewRun {
  automationId: string;
  projectId: string;
  triggerType: TriggerType;
  changes: RunChange[];
  scheduledFor: Date | null;
  /** `running` (a job follows) or a final outcome decided without a job. */
  outcome: RunOutcome;
  reason: string | null;
  at: Date;
}

/** The run for `keys`: created now, or the one that already has any of them. */
export async function recordRun(
  db: Kysely<Database>,
  keys: readonly string[],
  run: NewRun,
): Promise<{ id: string; created: boolean }> {
  const sorted = [...new Set(keys)].sort();
  if (sorted.length === 0) throw new RangeError('a run has at least one key');
  return db.transaction().execute(async (trx) => {
    const id = newAutomationRunId();
    const inserted = await trx
      .insertInto('automation_run_keys')
      .values(sorted.map((key) => ({ automation_id: run.automationId, key, run_id: id })))
      .onConflict((oc) => oc.columns(['automation_id', 'key']).doNothing())
      .returning('key')
      .execute();
    if (inserted.length === sorted.length) {
      await trx
        .insertInto('automation_runs')
        .values({
          id,
          automation_id: run.automationId,
          project_id: run.projectId,
          trigger_type: run.triggerType,
          changes: JSON.stringify(run.changes),
          scheduled_for: run.scheduledFor?.toISOString() ?? null,
          job_id: null,
          outcome: run.outcome,
          reason: run.reason,
          created_at: run.at.toISOString(),
        })
        .execute();
      return { id, created: true };
    }
    const existing = await trx
      .selectFrom('automation_run_keys')
      .select('run_id')
      .where('automation_id', '=', run.automationId)
      .where('key', 'in', sorted)
      .where('run_id', '!=', id)
      .executeTakeFirstOrThrow();
    if (inserted.length > 0) {
      // The keys this report adds name the same change: a later report sharing only these finds it.
      await trx
        .updateTable('automation_run_keys')
        .set({ run_id: existing.run_id })
        .where('automation_id', '=', run.automationId)
        .where('run_id', '=', id)
        .execute();
    }
    return { id: existing.run_id, created: false };
  });
}

/** Sets what became of a run: its job, or a final outcome without one. */
export async function settleRun(
  db: Kysely<Database>,
  runId: string,
  update: { jobId: string } | { outcome: RunOutcome; reason: string | null },
): Promise<void> {
  await db
    .updateTable('automation_runs')
    .set('jobId' in update ? { job_id: update.jobId } : { outcome: update.outcome, reason: update.reason })
    .where('id', '=', runId)
    .execute();
}

interface RunRowWithJob {
  id: string;
  automation_id: string;
  trigger_type: string;
  changes: string;
  scheduled_for: string | null;
  job_id: string | null;
  outcome: string;
  reason: string | null;
  created_at: string;
  job_status: string | null;
  job_pr_link: string | null;
  job_branch: string | null;
  job_error_code: string | null;
}

/** Runs joined with their jobs, for `toRun`. */
export function selectRuns(db: Kysely<Database>) {
  return db
    .selectFrom('automation_runs as r')
    .leftJoin('jobs as j', 'j.id', 'r.job_id')
    .select([
      'r.id',
      'r.automation_id',
      'r.trigger_type',
      'r.changes',
      'r.scheduled_for',
      'r.job_id',
      'r.outcome',
      'r.reason',
      'r.created_at',
      'j.status as job_status',
      'j.pr_link as job_pr_link',
      'j.branch as job_branch',
      'j.error_code as job_error_code',
    ]);
}

/**
 * A run as the API shows it. A run with a job follows what the job did: `running` while it is
 * active, `pull-request` when it completed with a pull request, `branch-pushed` when it pushed
 * its changes to a branch and opened no pull request (a local repository has none),
 * `no-changes-needed` when it completed without changing anything, `failed` (reason: the job's
 * error code, or `cancelled`) otherwise. The job's branch is set only when something was
 * committed to it (pipeline/pipeline.ts).
 */
export function toRun(row: RunRowWithJob): AutomationRun {
  let outcome = row.outcome as RunOutcome;
  let reason = row.reason;
  if (row.job_id !== null && outcome === 'running') {
    switch (row.job_status) {
      case 'completed':
        outcome = row.job_pr_link ? 'pull-request' : row.job_branch ? 'branch-pushed' : 'no-changes-needed';
        break;
      case 'failed':
        outcome = 'failed';
        reason = row.job_error_code;
        break;
      case 'archived':
        outcome = row.job_pr_link ? 'pull-request' : 'failed';
        reason = row.job_pr_link ? null : 'cancelled';
        break;
      case null:
        // The job is gone (its project too, a moment from now).
        outcome = 'failed';
        reason = 'job-not-found';
        break;
    }
  }
  return {
    id: row.id,
    automationId: row.automation_id,
    trigger: {
      type: row.trigger_type as TriggerType,
      changes: JSON.parse(row.changes) as RunChange[],
      scheduledFor: row.scheduled_for,
    },
    jobId: row.job_id,
    outcome,
    reason,
    createdAt: row.created_at,
  };
}
