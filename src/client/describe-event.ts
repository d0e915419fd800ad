/**
 * One line of text for a transcript event, for progress displays and logs: the event type and
 * what matters of its data. Control characters (a model's text could carry terminal escape
 * sequences) are removed and long values cut.
 */
import type { JobEvent } from './types.ts';

type Data = Record<string, unknown>;

const MAX_LINE = 160;

/** Text without control characters or line breaks, at most `max` characters. */
function clean(value: unknown, max = MAX_LINE): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  const flat = text
    .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The argument that says what a tool call works on (`path`, `from → to`, `pattern`). */
function toolTarget(input: unknown): string {
  if (!input || typeof input !== 'object') return '';
  const args = input as Data;
  if (typeof args.from === 'string' && typeof args.to === 'string') return `${args.from} → ${args.to}`;
  if (typeof args.pattern === 'string') return `/${args.pattern}/${args.path ? ` in ${args.path}` : ''}`;
  if (typeof args.path === 'string') return args.path;
  if (typeof args.title === 'string') return args.title;
  return '';
}

const describers: Record<string, (data: Data) => string> = {
  'job.created': (d) => clean(d.prompt),
  'job.message': (d) => clean(d.prompt),
  'job.retried': (d) =>
    `instruction ${d.retryOf ?? '?'} again${typeof d.ref === 'string' ? ` on ${clean(d.ref)}, the project's ref now (was ${clean(d.previousRef)})` : ''}`,
  'run.started': (d) => `attempt ${d.attempt ?? 1}`,
  'run.requeued': (d) => clean(d.reason),
  'agent.text': (d) => clean(d.text),
  'agent.tool_call': (d) => `${clean(d.tool, 40)} ${clean(toolTarget(d.input))}`.trim(),
  'agent.tool_result': (d) => `${clean(d.tool, 40)} ${d.ok ? 'ok' : `failed: ${clean(d.output, 120)}`}`,
  'agent.validation': (d) =>
    d.ok
      ? `round ${d.round}: valid`
      : `round ${d.round}: ${clean(Array.isArray(d.errors) ? d.errors.join('; ') : d.errors)}`,
  'agent.verification': (d) => {
    const checks = Array.isArray(d.checks) ? (d.checks as Data[]) : [];
    const found = checks.flatMap((c) => (Array.isArray(c.findings) ? (c.findings as Data[]) : []));
    const introduced = found.filter((f) => !f.preexisting).length;
    return `round ${d.round}: ${checks.length} checks, ${introduced} findings of this job${found.length > introduced ? `, ${found.length - introduced} already there` : ''}`;
  },
  'agent.retry': (d) =>
    `attempt ${d.attempt} in ${Math.ceil(Number(d.waitMs ?? 0) / 1000)} s: ${clean(d.reason, 100)}`,
  'agent.usage': (d) => `${d.inputTokens} input / ${d.outputTokens} output tokens`,
  'git.pushed': (d) => `branch ${clean(d.branch)}`,
  'changes.resolved': (d) =>
    clean(
      (Array.isArray(d.changes) ? (d.changes as Data[]) : [])
        .map(
          (c) =>
            `${c.repository}${c.kind === 'pull-request' ? `#${c.number}` : `@${String(c.sha).slice(0, 12)}`} ${c.title}`,
        )
        .join('; '),
    ),
  'change.commented': (d) => `${clean(d.repository, 60)}#${d.number}${d.url ? ` ${clean(d.url)}` : ''}`,
  'change.comment_failed': (d) => `${clean(d.repository, 60)}#${d.number}: ${clean(d.message, 120)}`,
  'code.context_unavailable': (d) => `${clean(d.repository, 60)}: ${clean(d.message, 120)}`,
  'job.completed': (d) =>
    d.answer !== undefined
      ? clean(`answered: ${d.summary ?? ''}`)
      : clean(d.prLink ?? (d.branch ? `branch ${d.branch}` : 'no files changed')),
  'job.failed': (d) => {
    const error = (d.error ?? {}) as Data;
    return clean(`${error.code ?? 'error'}: ${error.message ?? ''}`);
  },
  'job.archived': (d) => (d.previousStatus ? `was ${clean(d.previousStatus, 20)}` : ''),
};

/** `type: summary`, e.g. `agent.tool_call: edit_file quickstart.mdx`. */
export function describeEvent(event: Pick<JobEvent, 'type' | 'data'>): string {
  const data = event.data && typeof event.data === 'object' ? (event.data as Data) : {};
  const describe = describers[event.type];
  const summary = describe ? describe(data) : Object.keys(data).length > 0 ? clean(data) : '';
  const type = clean(event.type, 60);
  return summary ? `${type}: ${summary}` : type;
}
