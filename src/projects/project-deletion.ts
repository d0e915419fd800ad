/**
 * Deleting a project, and what it takes with it. The project's row goes, and with it (by the
 * schema's cascades) its jobs with their runs, transcripts and diffs, its API keys, webhook
 * endpoints with their deliveries, context repositories, idempotency keys, rate-limit uses and
 * token usage. A running run is cancelled: its worker loses it at once (signal) or at its next
 * check, and writes nothing more. Keys stop working at once in every process: each one's cache of
 * verified keys is emptied (`keys-changed`), and a lookup finds no key. Branches and pull requests
 * already pushed stay on the code host.
 */
import type { Kysely } from 'kysely';
import { DocwrightError } from '../errors.ts';
import type { Database } from '../store/schema.ts';
import type { Signal } from '../store/signals.ts';

/** What deleting a project removes, counted before it is done (for a confirmation) or as done. */
export interface ProjectDeletionImpact {
  jobs: number;
  /** Jobs still running or waiting for a worker: cancelled by the deletion. */
  activeJobs: number;
  keys: number;
  webhookEndpoints: number;
}

const count = (n: unknown) => Number(n ?? 0);

export async function projectDeletionImpact(
  db: Kysely<Database>,
  projectId: string,
): Promise<ProjectDeletionImpact> {
  // One after another: in a transaction, queries share its one connection.
  const jobs = await db
    .selectFrom('jobs')
    .select((eb) => [
      eb.fn.countAll().as('all'),
      eb.fn.count(eb.case().when('status', '=', 'active').then(1).end()).as('active'),
    ])
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  const keys = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  const webhooks = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return {
    jobs: count(jobs.all),
    activeJobs: count(jobs.active),
    keys: count(keys.n),
    webhookEndpoints: count(webhooks.n),
  };
}

/**
 * Deletes the project in one transaction and returns what it removed, with the signals to
 * publish once it has committed. Runs go first, then jobs, then the project: the order in which
 * a run recording its usage locks them, so that the two cannot deadlock on PostgreSQL.
 */
export async function deleteProjectRows(
  db: Kysely<Database>,
  projectId: string,
): Promise<{ impact: ProjectDeletionImpact; signals: Signal[] }> {
  return db.transaction().execute(async (trx) => {
    const impact = await projectDeletionImpact(trx, projectId);
    const runs = await trx
      .deleteFrom('job_runs')
      .where('project_id', '=', projectId)
      .where('status', 'in', ['queued', 'running'])
      .returning(['id', 'job_id'])
      .execute();
    await trx.deleteFrom('job_runs').where('project_id', '=', projectId).execute();
    await trx.deleteFrom('jobs').where('project_id', '=', projectId).execute();
    const deleted = await trx.deleteFrom('projects').where('id', '=', projectId).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) {
      throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
    }
    const signals: Signal[] = [
      // Every process's cache of verified keys forgets them.
      { kind: 'keys-changed' },
      // Workers abort these runs now rather than at their next check; streams of their jobs end.
      ...runs.map((run): Signal => ({ kind: 'run-cancelled', runId: run.id })),
      ...[...new Set(runs.map((run) => run.job_id))].map((jobId): Signal => ({ kind: 'job-event', jobId })),
    ];
    return { impact, signals };
  });
}
