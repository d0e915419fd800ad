/**
 * A job as `docwright job get|create|watch` prints it without --json: its fields one a line, its
 * code changes by name, and the checks of its last verification with their findings; an ask
 * job's answer last, with its citations as `path:start-end`.
 */
import type { AgentJob } from '../client/types.ts';
import { describe } from './output.ts';

const STATUS_TEXT: Record<AgentJob['checks'][number]['status'], string> = {
  passed: 'passed',
  fixed: 'fixed by the agent',
  failed: 'failed',
  skipped: 'skipped',
};

function checkLines(checks: AgentJob['checks']): string[] {
  if (checks.length === 0) return ['checks: -'];
  const width = Math.max(...checks.map((c) => c.name.length));
  return [
    'checks:',
    ...checks.flatMap((check) => [
      `  ${check.name.padEnd(width)}  ${STATUS_TEXT[check.status]}`,
      ...check.findings.map(
        (f) =>
          `    ${f.path}${f.line === null ? '' : `:${f.line}`}  ${f.message}  (${f.level}${f.preexisting ? ', already there' : ''})`,
      ),
    ]),
  ];
}

/** An ask job's answer, indented under its heading, then one citation a line. */
function answerLines(job: AgentJob): string[] {
  if (job.mode !== 'ask') return [];
  if (job.answer === null) return ['answer: -'];
  return [
    'answer:',
    ...job.answer.split('\n').map((line) => (line === '' ? '' : `  ${line}`)),
    job.citations.length === 0 ? 'citations: -' : 'citations:',
    ...job.citations.map((c) => `  ${citationText(c)}`),
  ];
}

/** A citation as editors and terminals link it: `path:start-end`. */
export const citationText = (c: AgentJob['citations'][number]): string =>
  `${c.path}:${c.startLine}-${c.endLine}`;

export function jobText(job: AgentJob): string {
  const { changes, checks, answer: _answer, citations: _citations, ...fields } = job;
  const changeNames = changes.map((c) =>
    c.kind === 'pull-request'
      ? `${c.repository}#${c.number}`
      : `${c.repository}@${c.sha?.slice(0, 12) ?? '(not resolved yet)'}`,
  );
  return [
    describe({ ...fields, changes: changeNames } as unknown as Record<string, unknown>),
    ...(job.mode === 'ask' ? [] : checkLines(checks)),
    ...answerLines(job),
  ].join('\n');
}
