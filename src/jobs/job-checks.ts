/**
 * AgentJob `checks` (SPEC §19, docs/verification.mdx): what the last verification of the job's
 * pull request found, check by check, as the agent's run reported it.
 */
import { z } from 'zod';

export const CHECK_STATUSES = ['passed', 'fixed', 'failed', 'skipped'] as const;

export const jobCheckSchema = z.object({
  name: z
    .string()
    .meta({ description: 'The check: `pages`, `links`, `style`, `spelling`, or a command line.' }),
  status: z.enum(CHECK_STATUSES).meta({
    description:
      '`passed`: nothing of this job found; `fixed`: the agent fixed what an earlier round found; `failed`: findings of this job remain; `skipped`: not applied (the reason is in the transcript).',
  }),
  findings: z.array(
    z.object({
      path: z.string(),
      line: z.number().int().nullable(),
      message: z.string(),
      level: z.enum(['error', 'warning', 'suggestion']),
      preexisting: z.boolean().meta({ description: 'Already in the base tree: never blocks.' }),
    }),
  ),
});
export type JobCheck = z.output<typeof jobCheckSchema>;

/** Reports kept per job at most, and findings per check: a model cannot grow a job record without bound. */
const MAX_CHECKS = 50;
const MAX_FINDINGS = 100;

/** The stored form of a run's report, bounded. */
export function storedChecks(checks: readonly JobCheck[]): string {
  return JSON.stringify(
    checks.slice(0, MAX_CHECKS).map((c) => ({
      name: c.name.slice(0, 500),
      status: c.status,
      findings: c.findings.slice(0, MAX_FINDINGS).map((f) => ({ ...f, message: f.message.slice(0, 4_500) })),
    })),
  );
}

export function parseJobChecks(stored: string | null | undefined): JobCheck[] {
  return stored ? (JSON.parse(stored) as JobCheck[]) : [];
}
