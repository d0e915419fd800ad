/**
 * The job page's Checks (docs/verification.mdx): each check of the last verification, how it
 * went — "fixed by the agent" when an earlier round found something the agent then fixed — and
 * its findings, those already in the base tree marked as such.
 */
import type { AgentJob } from '../jobs/agent-job.ts';
import { type Html, html } from './html.ts';

const STATUS_TEXT: Record<AgentJob['checks'][number]['status'], string> = {
  passed: 'passed',
  fixed: 'fixed by the agent',
  failed: 'failed',
  skipped: 'skipped',
};

const STATUS_CLASS: Record<AgentJob['checks'][number]['status'], string> = {
  passed: 'ok-text',
  fixed: 'ok-text',
  failed: 'error-text',
  skipped: 'muted small',
};

type CheckFinding = AgentJob['checks'][number]['findings'][number];

const finding = (f: CheckFinding): Html =>
  html`<li><code>${f.path}${f.line === null ? '' : `:${f.line}`}</code> ${f.message} <span class="small muted">(${f.level}${f.preexisting ? ', already there before this job' : ''})</span></li>`;

/** The `Checks` row of the job's facts, or nothing before the first verification. */
export function jobChecks(job: AgentJob): Html | false {
  if (job.checks.length === 0) return false;
  return html`<dt id="checks-label">Checks</dt><dd><ul class="plain checks" aria-labelledby="checks-label">${job.checks.map(
    (check) =>
      html`<li><span class="mono">${check.name}</span> <strong class="${STATUS_CLASS[check.status]}">${STATUS_TEXT[check.status]}</strong>${
        check.findings.length > 0 && html`<ul class="small">${check.findings.map(finding)}</ul>`
      }</li>`,
  )}</ul></dd>`;
}
