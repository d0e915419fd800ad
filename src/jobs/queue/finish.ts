import type { Kysely } from 'kysely';
import type { Store } from '../../store/database.ts';
import type { Database, JobRunRow } from '../../store/schema.ts';
import type { Signals } from '../../store/signals.ts';
import { appendEvent } from '../events.ts';
import { storedChecks } from '../job-checks.ts';
import type { RunOutcome } from '../run-outcome.ts';
import { enqueueJobMessage } from '../webhook-outbox.ts';
import { finishRunInOneStatement } from './finish-postgres.ts';
import { completeJob } from './sql/complete-job.ts';
import { endRun } from './sql/end-run.ts';
import { failJob } from './sql/fail-job.ts';
import { insertRunDiffStatement } from './sql/insert-run-diff.ts';

/**
 * Ends a run with its outcome and moves the job out of `active`, in one
 * transaction and only while `workerId` holds the attempt `run` is (its
 * `attempts`). Returns false (and writes nothing) when the lease was lost, the
 * run was cancelled, or it was claimed again since (by this worker too).
 * The job's followers (streams, the dashboard, the webhook dispatcher) are told of its last event.
 * On PostgreSQL a plain ending is one statement that tells them as it commits
 * (finish-postgres.ts).
 */
export async function finishRun(
  { store, signals }: { store: Store; signals: Pick<Signals, 'publish'> },
  finish: RunFinish,
): Promise<boolean> {
  // An answer is stored the transaction's way too: the one statement writes no answer.
  const plain = !(finish.outcome.status === 'completed' && (finish.outcome.diff || finish.outcome.answer));
  if (store.dialect === 'postgres' && plain) {
    const ended = await finishRunInOneStatement(store, finish);
    if (ended !== 'subscribed') return ended === 'finished';
  }
  const finished = await finishRunInTransaction(store.db, finish);
  if (finished) await signals.publish({ kind: 'job-event', jobId: finish.run.job_id }).catch(() => {});
  return finished;
}

interface RunFinish {
  run: JobRunRow;
  workerId: string;
  outcome: RunOutcome;
  now: Date;
}

async function finishRunInTransaction(db: Kysely<Database>, finish: RunFinish): Promise<boolean> {
  const { run, outcome } = finish;
  const at = finish.now.toISOString();
  return db.transaction().execute(async (trx) => {
    const ended = await trx.executeQuery(
      endRun(trx, {
        id: run.id,
        workerId: finish.workerId,
        attempts: run.attempts,
        status: outcome.status === 'completed' ? 'succeeded' : 'failed',
        at,
        // An answer is what a follow-up question of the job is told of this run (its history).
        summary: outcome.status === 'completed' ? (outcome.answer?.text ?? outcome.summary) : null,
        errorCode: outcome.status === 'failed' ? outcome.error.code : null,
        errorMessage: outcome.status === 'failed' ? outcome.error.message : null,
      }),
    );
    if (Number(ended.numAffectedRows ?? 0) === 0) return false;
    await endJob(trx, finish, at);
    if (outcome.status === 'completed' && outcome.diff) {
      await insertRunDiffStatement(trx, run, outcome.diff, at).execute();
    }
    await appendEvent(
      trx,
      {
        jobId: run.job_id,
        runId: run.id,
        type: outcome.status === 'completed' ? 'job.completed' : 'job.failed',
        data:
          outcome.status === 'completed'
            ? {
                prLink: outcome.prLink,
                branch: outcome.branch,
                summary: outcome.summary,
                ...(outcome.answer && { answer: outcome.answer.text, citations: outcome.answer.citations }),
              }
            : { error: outcome.error },
      },
      finish.now,
    );
    return true;
  });
}

/** Moves the run's job out of `active` with the run's outcome, and queues its webhook message. */
async function endJob(trx: Kysely<Database>, { run, outcome, now }: RunFinish, at: string): Promise<void> {
  // Usage is not part of the outcome: it was recorded turn by turn (src/jobs/usage.ts).
  const changes = outcome.changes ? JSON.stringify(outcome.changes) : null;
  const checks = outcome.checks ? storedChecks(outcome.checks) : null;
  const changed = await trx.executeQuery(
    outcome.status === 'completed'
      ? completeJob(trx, {
          id: run.job_id,
          at,
          changes,
          checks,
          prLink: outcome.prLink,
          branch: outcome.branch,
          summary: outcome.summary,
          answer: outcome.answer?.text ?? null,
          citations: outcome.answer ? JSON.stringify(outcome.answer.citations) : null,
        })
      : failJob(trx, {
          id: run.job_id,
          at,
          changes,
          checks,
          errorCode: outcome.error.code,
          errorMessage: outcome.error.message,
        }),
  );
  if (Number(changed.numAffectedRows ?? 0) > 0) {
    await enqueueJobMessage(trx, {
      type: outcome.status === 'completed' ? 'job.completed' : 'job.failed',
      projectId: run.project_id,
      jobId: run.job_id,
      at: now,
    });
  }
}
