/** One line saying where a job stands, for people (the CLI, MCP tool results). */
import type { AgentJob } from './types.ts';

export function describeJob(job: AgentJob): string {
  if (job.status === 'failed') {
    return `job ${job.id} failed: ${job.error?.code ?? 'error'}: ${job.error?.message ?? ''}`;
  }
  const result =
    job.mode === 'ask'
      ? `answered: ${job.summary ?? ''}`
      : (job.prLink ?? (job.branch ? `branch ${job.branch}` : 'no files changed'));
  return `job ${job.id} ${job.status}${job.status === 'completed' ? `: ${result}` : ''}`;
}
