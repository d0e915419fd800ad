/**
 * Model usage as it accrues (docs/api/overview.mdx `usage`, docs/agent.mdx budgets per job): every model turn adds its
 * tokens to the run, the job and the project's calendar month at once, so that a job that fails
 * or is cancelled still shows what it spent, a follow-up starts from what the job has used, and
 * the project's monthly budget sees every token.
 */
import type { Kysely } from 'kysely';
import type { Database, JobRunRow } from '../store/schema.ts';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** What a job has spent before one of its runs starts: model turns, tokens, time running. */
export interface JobSpending {
  steps: number;
  tokens: number;
  durationMs: number;
}

/** The calendar month (UTC) `at` falls in, as project_usage keys it: `YYYY-MM`. */
export const usageMonth = (at: Date): string => at.toISOString().slice(0, 7);

/** The start of the next calendar month (UTC) after `at`: when a monthly budget is renewed. */
export function nextMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/**
 * Adds one model turn (`steps` turns) and its tokens to the run, its job and its project's month,
 * in one transaction. Written whoever holds the run now: the tokens were spent either way
 * (unless the run was deleted with its project).
 */
export async function recordUsage(
  db: Kysely<Database>,
  entry: {
    run: Pick<JobRunRow, 'id' | 'job_id' | 'project_id'>;
    usage: TokenUsage;
    steps?: number;
    at: Date;
  },
): Promise<void> {
  const { run, usage } = entry;
  const input = Math.max(0, Math.round(usage.inputTokens));
  const output = Math.max(0, Math.round(usage.outputTokens));
  await db.transaction().execute(async (trx) => {
    const counted = await trx
      .updateTable('job_runs')
      .set((eb) => ({
        steps: eb('steps', '+', entry.steps ?? 1),
        input_tokens: eb('input_tokens', '+', input),
        output_tokens: eb('output_tokens', '+', output),
      }))
      .where('id', '=', run.id)
      .executeTakeFirst();
    // The run is gone with its project (deleted while it ran): there is nothing left to charge.
    if (Number(counted.numUpdatedRows) === 0) return;
    await trx
      .updateTable('jobs')
      .set((eb) => ({
        input_tokens: eb(eb.fn.coalesce('input_tokens', eb.val(0)), '+', input),
        output_tokens: eb(eb.fn.coalesce('output_tokens', eb.val(0)), '+', output),
      }))
      .where('id', '=', run.job_id)
      .execute();
    await trx
      .insertInto('project_usage')
      .values({
        project_id: run.project_id,
        month: usageMonth(entry.at),
        input_tokens: input,
        output_tokens: output,
      })
      .onConflict((oc) =>
        oc.columns(['project_id', 'month']).doUpdateSet((eb) => ({
          input_tokens: eb('project_usage.input_tokens', '+', eb.ref('excluded.input_tokens')),
          output_tokens: eb('project_usage.output_tokens', '+', eb.ref('excluded.output_tokens')),
        })),
      )
      .execute();
  });
}

/**
 * What the job of `run` spent before this attempt of it: turns and tokens of every run and
 * attempt so far, and the time its earlier runs ran plus the time this run has already run in
 * earlier attempts (its `started_at` is its first start).
 */
export async function jobSpending(
  db: Kysely<Database>,
  run: Pick<JobRunRow, 'id' | 'job_id' | 'seq' | 'started_at' | 'steps' | 'input_tokens' | 'output_tokens'>,
  at: Date,
): Promise<JobSpending> {
  // A job's first run is its only one (a follow-up waits for the job to end): its row says it all.
  const runs =
    run.seq === 1
      ? [{ ...run, ended_at: null }]
      : await db
          .selectFrom('job_runs')
          .select(['id', 'steps', 'input_tokens', 'output_tokens', 'started_at', 'ended_at'])
          .where('job_id', '=', run.job_id)
          .execute();
  let steps = 0;
  let tokens = 0;
  let durationMs = 0;
  for (const r of runs) {
    steps += Number(r.steps);
    tokens += Number(r.input_tokens) + Number(r.output_tokens);
    if (r.id === run.id) continue;
    if (r.started_at && r.ended_at)
      durationMs += Math.max(0, Date.parse(r.ended_at) - Date.parse(r.started_at));
  }
  if (run.started_at) durationMs += Math.max(0, at.getTime() - Date.parse(run.started_at));
  return { steps, tokens, durationMs };
}

/** Tokens (input and output) the project has spent in the calendar month of `at`. */
export async function monthlyTokens(db: Kysely<Database>, projectId: string, at: Date): Promise<number> {
  const row = await db
    .selectFrom('project_usage')
    .select(['input_tokens', 'output_tokens'])
    .where('project_id', '=', projectId)
    .where('month', '=', usageMonth(at))
    .executeTakeFirst();
  return row ? Number(row.input_tokens) + Number(row.output_tokens) : 0;
}
