import type { Transaction } from 'kysely';
import { DocwrightError } from '../errors.ts';
import type { Database, ProjectRow } from '../store/schema.ts';
import type { AgentJob } from './agent-job.ts';
import { findReplay, type IdempotentRequest, rememberWork } from './idempotency.ts';
import type { JobContext } from './job-context.ts';
import { consumeRateLimit, peekRateLimit } from './rate-limit.ts';
import { monthlyTokens, nextMonth, usageMonth } from './usage.ts';
import type { JobWork } from './work-result.ts';

/** The work itself, in the transaction that locked the project: the job it created or continued. */
export type Work = (
  trx: Transaction<Database>,
  project: ProjectRow,
  at: Date,
) => Promise<{ job: AgentJob; created: boolean }>;

/**
 * The shared shape of create, follow-up and retry: one transaction that locks the project,
 * answers a replayed `Idempotency-Key` from storage, consumes a rate-limit use, does the work
 * and remembers what it did; then the workers are told.
 */
export function workTransaction(context: JobContext) {
  const { db, now, limitOf } = context;
  return async (
    projectId: string,
    idempotency: IdempotentRequest | undefined,
    work: Work,
  ): Promise<JobWork> => {
    const result = await db.transaction().execute(async (trx): Promise<JobWork> => {
      const at = now();
      const project = await context.lockedProject(trx, projectId);
      if (idempotency) {
        const replay = await findReplay(trx, projectId, idempotency, at);
        if (replay) {
          const rateLimit = await peekRateLimit(trx, projectId, limitOf(project), at);
          return { ...replay, rateLimit, replayed: true };
        }
      }
      await checkTokenBudget(trx, project, at);
      const rateLimit = await consumeRateLimit(trx, projectId, limitOf(project), at);
      const { job, created } = await work(trx, project, at);
      if (idempotency) await rememberWork(trx, projectId, idempotency, { job, created }, at);
      return { job, created, rateLimit, replayed: false };
    });
    if (!result.replayed) await context.publish({ kind: 'run-queued' });
    return result;
  };
}

/** Refuses new work once the project's monthly token budget is spent (until the month ends). */
async function checkTokenBudget(trx: Transaction<Database>, project: ProjectRow, at: Date): Promise<void> {
  const budget = (JSON.parse(project.settings) as { monthlyTokenBudget?: number | null }).monthlyTokenBudget;
  if (!budget) return;
  const spent = await monthlyTokens(trx, project.id, at);
  if (spent < budget) return;
  const renewed = nextMonth(at);
  throw new DocwrightError(
    'token-budget-exceeded',
    `the project has used ${spent} of its ${budget} model tokens for ${usageMonth(at)}; new jobs and follow-ups are refused until ${renewed.toISOString().slice(0, 10)} (UTC), unless the budget is raised (docwright project update --monthly-token-budget)`,
    { retryAfter: Math.ceil((renewed.getTime() - at.getTime()) / 1000) },
  );
}
