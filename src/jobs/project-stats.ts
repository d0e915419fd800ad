import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

/** What the overview shows of a project (docs/dashboard.mdx). */
export interface ProjectStats {
  /** Jobs active now. */
  active: number;
  /** Jobs that completed, or failed, in the last 24 hours. */
  completed: number;
  failed: number;
  /** Model tokens (input and output) of jobs that ran in the last 30 days. */
  tokens: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Counts for the overview in two grouped queries over all projects. A job's `updated_at` is
 * when it last changed, which for a completed or failed job is when it ended.
 */
export async function projectStats(
  deps: { db: Kysely<Database>; now: () => Date },
  projectIds: readonly string[],
): Promise<Map<string, ProjectStats>> {
  const stats = new Map<string, ProjectStats>(
    projectIds.map((id) => [id, { active: 0, completed: 0, failed: 0, tokens: 0 }]),
  );
  if (projectIds.length === 0) return stats;
  const now = deps.now().getTime();
  const { db } = deps;
  const dayAgo = new Date(now - DAY_MS).toISOString();
  const counts = await db
    .selectFrom('jobs')
    .select(['project_id', 'status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where((eb) =>
      eb.or([
        eb('status', '=', 'active'),
        eb.and([eb('status', 'in', ['completed', 'failed']), eb('updated_at', '>=', dayAgo)]),
      ]),
    )
    .groupBy(['project_id', 'status'])
    .execute();
  for (const row of counts) {
    const entry = stats.get(row.project_id);
    if (entry && row.status !== 'archived') entry[row.status] = Number(row.n);
  }
  const tokens = await db
    .selectFrom('jobs')
    .select([
      'project_id',
      (eb) =>
        eb.fn
          .sum<number | string | null>(
            eb(eb.fn.coalesce('input_tokens', eb.val(0)), '+', eb.fn.coalesce('output_tokens', eb.val(0))),
          )
          .as('tokens'),
    ])
    .where('updated_at', '>=', new Date(now - 30 * DAY_MS).toISOString())
    .groupBy('project_id')
    .execute();
  for (const row of tokens) {
    const entry = stats.get(row.project_id);
    if (entry) entry.tokens = Number(row.tokens ?? 0);
  }
  return stats;
}
