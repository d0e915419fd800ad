import type { JobEvent } from '../jobs/events.ts';
import { isWebLink } from '../web-link.ts';
import { type Html, html, type Renderable } from './html.ts';

/**
 * A job's transcript as HTML: each event one list item, readable without knowing the event
 * format. Tool inputs are shown field by field; long tool outputs and long values are collapsed
 * into `<details>`, so a transcript of many steps stays scannable.
 */
type Data = Record<string, unknown>;

const LONG_CHARS = 400;
const LONG_LINES = 8;

const isLong = (text: string) => text.length > LONG_CHARS || text.split('\n').length > LONG_LINES;

const asText = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? String(value));

/** A value in a `<pre>`, collapsed behind `summary` when it is long. */
function block(value: unknown, summary: string): Html {
  const text = asText(value);
  return isLong(text)
    ? html`<details><summary>${summary} (${text.split('\n').length} lines)</summary><pre>${text}</pre></details>`
    : html`<pre>${text}</pre>`;
}

function toolInput(input: unknown): Renderable {
  if (!input || typeof input !== 'object') return input === undefined ? '' : block(input, 'Input');
  return html`<dl class="facts small">${Object.entries(input as Data).map(
    ([name, value]) =>
      html`<dt>${name}</dt><dd>${
        typeof value === 'string' && !isLong(value) && !value.includes('\n')
          ? html`<code>${value}</code>`
          : block(value, name)
      }</dd>`,
  )}</dl>`;
}

function item(event: JobEvent, kind: string, content: Renderable, className = ''): Html {
  return html`<li id="event-${event.id}" class="${className}"><div class="kind">${kind}</div>${content}</li>`;
}

/** Why a run went back to the queue (`run.requeued`'s reason, src/jobs/queue/sweep.ts), in words. */
const REQUEUE_REASONS: Record<string, string> = {
  'worker-gone':
    'The process of the worker running it ended (killed or crashed): the run was restarted at once.',
  'lease-expired': 'The worker running it stopped answering: the run was restarted once its lease expired.',
};

export function renderEvent(event: JobEvent): Html {
  const d = (event.data && typeof event.data === 'object' ? event.data : {}) as Data;
  switch (event.type) {
    case 'job.created':
      return item(
        event,
        'Job created',
        html`<div class="small muted">Model ${asText(d.model)} on ${asText(d.ref)}</div>`,
      );
    case 'job.message':
      return item(event, 'Follow-up instruction', html`<div class="text">${asText(d.prompt)}</div>`);
    case 'job.retried':
      return item(
        event,
        `Retry of instruction ${typeof d.retryOf === 'number' ? d.retryOf : '?'}`,
        html`<div class="small muted">The failed run's instruction again${typeof d.ref === 'string' && html` on ${asText(d.ref)}, the project's ref now (was ${asText(d.previousRef)})`}</div>`,
      );
    case 'run.started':
      return item(
        event,
        'Run started',
        html`<div class="small muted">Instruction ${asText(d.seq ?? 1)}, attempt ${asText(d.attempt ?? 1)}</div>`,
      );
    case 'run.requeued':
      return item(
        event,
        'Run retried',
        html`<div class="small">${REQUEUE_REASONS[String(d.reason)] ?? asText(d.reason)}</div>`,
      );
    case 'agent.text':
      return item(event, 'Model', html`<div class="text">${asText(d.text)}</div>`);
    case 'agent.tool_call':
      return item(event, `Tool call · ${asText(d.tool)}`, toolInput(d.input));
    case 'agent.tool_result':
      return item(
        event,
        `${d.ok ? 'Result' : 'Failed'} · ${asText(d.tool)}`,
        block(d.output ?? '', 'Output'),
        d.ok ? '' : 'fail',
      );
    case 'agent.validation': {
      const errors = Array.isArray(d.errors) ? d.errors.map(asText) : [];
      return item(
        event,
        `Validation round ${asText(d.round)}`,
        d.ok
          ? html`<div class="small">All changed files are valid.</div>`
          : html`<ul class="small">${errors.map((e) => html`<li>${e}</li>`)}</ul>`,
        d.ok ? 'ok-step' : 'fail',
      );
    }
    case 'agent.verification':
      return verificationItem(event, d);
    case 'agent.retry':
      return item(
        event,
        'Model retry',
        html`<div class="small">Attempt ${asText(d.attempt)} in ${Math.ceil(Number(d.waitMs ?? 0) / 1000)} s: ${asText(d.reason)}</div>`,
      );
    case 'agent.usage':
      return item(
        event,
        'Tokens',
        html`<div class="small">${asText(d.inputTokens)} input · ${asText(d.outputTokens)} output</div>`,
      );
    case 'git.pushed':
      return item(event, 'Pushed', html`<div class="small mono">${asText(d.branch)}</div>`, 'ok-step');
    case 'git.diff_failed':
      return item(event, 'Diff not stored', html`<div class="small">${asText(d.message)}</div>`);
    case 'pull_request.ready':
      return item(
        event,
        d.created ? 'Pull request opened' : 'Pull request updated',
        isWebLink(d.url)
          ? html`<a href="${d.url}" rel="noreferrer">${d.url}</a>`
          : html`<span class="mono">${asText(d.url)}</span>`,
        'ok-step',
      );
    case 'job.completed':
      return item(
        event,
        'Completed',
        html`<div class="small">${asText(d.summary ?? 'Done.')}</div>`,
        'ok-step',
      );
    case 'job.failed': {
      const error = (d.error ?? {}) as Data;
      return item(
        event,
        'Failed',
        html`<div class="small"><code>${asText(error.code)}</code> ${asText(error.message)}</div>`,
        'fail',
      );
    }
    case 'job.archived':
      return item(event, 'Archived', html`<div class="small muted">Was ${asText(d.previousStatus)}.</div>`);
    default:
      return item(event, event.type, Object.keys(d).length > 0 ? block(d, 'Details') : '');
  }
}

export const renderEvents = (events: JobEvent[]): Html => html`${events.map(renderEvent)}`;

/** A verification round: each check, and the findings of this job and those already there. */
function verificationItem(event: JobEvent, d: Data): Html {
  const checks = (Array.isArray(d.checks) ? d.checks : []) as Data[];
  const findings = checks.flatMap((c) => (Array.isArray(c.findings) ? (c.findings as Data[]) : []));
  const introduced = findings.filter((f) => !f.preexisting && f.level === 'error');
  return item(
    event,
    `Verification round ${asText(d.round)}`,
    html`<ul class="small">${checks.map(
      (c) =>
        html`<li><strong>${asText(c.name)}</strong> ${
          c.skipped !== undefined
            ? html`<span class="muted">skipped: ${asText(c.skipped)}</span>`
            : html`${((c.findings as Data[] | undefined) ?? []).length === 0 ? 'passed' : ''}<ul>${(
                (c.findings as Data[] | undefined) ?? []
              ).map(
                (f) =>
                  html`<li><code>${asText(f.path)}${f.line == null ? '' : `:${asText(f.line)}`}</code> ${asText(f.message)} <span class="muted">(${asText(f.level)}${f.preexisting ? ', already there' : ''})</span></li>`,
              )}</ul>`
        }</li>`,
    )}</ul>`,
    introduced.length === 0 ? 'ok-step' : 'fail',
  );
}
