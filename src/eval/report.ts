/**
 * The HTML report of `docwright eval --report FILE.html`: the summary, a table of the tasks, and
 * per task its score, checks and the diff the job made. One self-contained file in the
 * dashboard's look (its stylesheet inlined, its diff view); every text in it — model output,
 * diffs, file names, task files — goes through the dashboard's escaping templates.
 */
import { assets } from '../dashboard/assets.ts';
import { renderDiff } from '../dashboard/diff-view.ts';
import { type Html, html, unsafeHtml } from '../dashboard/html.ts';
import { formatNumber } from '../dashboard/layout.ts';
import { dogbenchItemSection, dogbenchSummaryStats } from './dogbench-report.ts';
import type { EvalRun } from './eval.ts';
import type { CheckReport, TaskReport } from './run-task.ts';

/** Styles of the report's own (the rest is the dashboard's stylesheet). */
const REPORT_CSS = `
.score { font-size: 1.5rem; font-weight: 700; }
.result-passed { color: var(--ok); font-weight: 600; }
.result-failed { color: var(--danger); font-weight: 600; }
.detail, .criterion { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
.task { scroll-margin-top: 1rem; }
.checks th, .checks td:nth-child(1), .checks td:nth-child(3), .checks td:nth-child(4) { white-space: nowrap; overflow-wrap: normal; }
`;

const fmt = (value: number | null, suffix = '') => (value === null ? '—' : `${value}${suffix}`);

/**
 * An outcome's colour says whether it is what the task expected: `no-changes` is green for a
 * task that expected none and red where a patch was expected (issue 35: it was green either way).
 */
function outcomeClass(report: Pick<TaskReport, 'outcome' | 'expected'>): string {
  if (report.outcome === 'failed') return 'status-failed';
  if (report.outcome === 'invalid') return 'status-archived';
  return report.expected === null || report.outcome === report.expected
    ? 'status-completed'
    : 'status-failed';
}

const outcomeBadge = (report: TaskReport): Html => {
  const missed =
    report.expected !== null && report.outcome !== report.expected && report.outcome !== 'invalid';
  return html`<span class="status ${outcomeClass(report)}">${report.outcome}</span>${missed && report.outcome !== 'failed' && html` <span class="small muted">(expected ${report.expected})</span>`}`;
};

function describeCheck(report: CheckReport): Html {
  if (report.kind === 'judge') return html`<p class="criterion">${report.criterion.text}</p>`;
  const { check } = report;
  return html`<code>${check.type}</code>${check.path && html` <code>${check.path}</code>`}${check.pattern && html` <code>/${check.pattern}/</code>`}${check.points !== undefined && html` <span class="muted small">(${check.points} points)</span>`}`;
}

function checksTable(report: TaskReport): Html {
  if (report.checks.length === 0) return html`<p class="muted">No checks.</p>`;
  return html`<table class="checks">
<thead><tr><th scope="col">Result</th><th scope="col">Check</th><th scope="col">Priority</th><th scope="col">Scoring</th><th scope="col">Detail</th></tr></thead>
<tbody>${report.checks.map((c) => {
    const { priority, scoring } = c.kind === 'check' ? c.check : c.criterion;
    return html`<tr>
  <td data-label="Result"><span class="${c.passed ? 'result-passed' : 'result-failed'}">${c.passed ? '✓ passed' : '✗ failed'}</span></td>
  <td data-label="Check">${c.kind === 'judge' && html`<span class="muted small">judge</span> `}${describeCheck(c)}</td>
  <td data-label="Priority">${priority}</td>
  <td data-label="Scoring">${scoring}</td>
  <td data-label="Detail"><p class="detail small">${c.detail}</p></td>
</tr>`;
  })}</tbody>
</table>`;
}

function taskSection(report: TaskReport, index: number): Html {
  return html`<section class="panel task" id="task-${index}" aria-labelledby="task-${index}-heading">
  <div class="page-head">
    <div><h2 id="task-${index}-heading" class="mono">${report.id}</h2>
    <p class="small muted wrap">${report.origin}</p></div>
    <div class="score" aria-label="Score">${fmt(report.score)}</div>
  </div>
  <dl class="facts">
    <dt>Expected</dt><dd>${report.expected ?? '—'}</dd>
    <dt>Outcome</dt><dd>${outcomeBadge(report)}</dd>
    <dt>P0 clean</dt><dd>${report.p0Clean ? 'yes' : 'no'}</dd>
    <dt>Job</dt><dd>${report.jobId ? html`<code>${report.jobId}</code>` : '—'}</dd>
    <dt>Tokens</dt><dd>${formatNumber(report.tokens.input)} in · ${formatNumber(report.tokens.output)} out</dd>
    <dt>Time</dt><dd>${report.seconds} s</dd>
    ${report.error && html`<dt>Error</dt><dd><span class="error-text">${report.error}</span></dd>`}
  </dl>
  ${report.summary && html`<h3>Agent's summary</h3><p class="detail">${report.summary}</p>`}
  ${report.dogbench ? html`<h3>DogBench verdicts</h3>${dogbenchItemSection(report.dogbench)}` : html`<h3>Checks</h3>${checksTable(report)}`}
  ${
    report.outcome === 'patch' || report.outcome === 'no-changes'
      ? html`<h3>Changes</h3>${report.outcome === 'no-changes' ? html`<p class="muted">No file was changed.</p>` : renderDiff(report.diff, {})}`
      : ''
  }
</section>`;
}

/** The report of one evaluation, as a complete HTML document. */
export function renderReport(run: EvalRun): string {
  const { summary } = run;
  const title = `docwright eval · ${run.model}`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${unsafeHtml(assets.style.body.toString('utf8'))}${unsafeHtml(REPORT_CSS)}</style>
</head>
<body>
<header class="top"><span class="brand">docwright eval</span></header>
<main id="main">
<div class="page-head">
  <div><h1>Evaluation of <span class="mono">${run.model}</span></h1>
  <p class="small muted wrap">Suite ${run.suite}${run.judge && html` · judged by <span class="mono">${run.judge}</span>`}</p></div>
</div>
<section class="panel" aria-labelledby="summary-heading">
  <h2 id="summary-heading">Summary</h2>
  ${
    run.dogbench
      ? dogbenchSummaryStats(run.dogbench)
      : html`<dl class="stats">
    <div><dt>Composite</dt><dd>${fmt(summary.composite)}</dd></div>
    <div><dt>D (patch tasks, mean score)</dt><dd>${fmt(summary.D)}</dd></div>
    <div><dt>N (no-change tasks at 100)</dt><dd>${fmt(summary.N, '%')}</dd></div>
    <div><dt>P0 clean</dt><dd>${fmt(summary.p0CleanRate, '%')}</dd></div>
  </dl>`
  }
  <p class="small muted">${summary.tasks} tasks (${summary.patchTasks} patch, ${summary.noChangeTasks} no-change) ·
  ${formatNumber(summary.tokens.input)} tokens in · ${formatNumber(summary.tokens.output)} out · ${summary.seconds} s</p>
  <table>
    <thead><tr><th scope="col">Task</th><th scope="col">Expected</th><th scope="col">Outcome</th><th scope="col">Score</th><th scope="col">P0 clean</th><th scope="col">Time</th></tr></thead>
    <tbody>${run.tasks.map(
      (t, i) => html`<tr>
      <td data-label="Task"><a href="#task-${i}" class="mono">${t.id}</a></td>
      <td data-label="Expected">${t.expected ?? '—'}</td>
      <td data-label="Outcome">${outcomeBadge(t)}</td>
      <td data-label="Score">${fmt(t.score)}</td>
      <td data-label="P0 clean">${t.p0Clean ? 'yes' : 'no'}</td>
      <td data-label="Time">${t.seconds} s</td>
    </tr>`,
    )}</tbody>
  </table>
</section>
${run.tasks.map(taskSection)}
</main>
</body>
</html>
`.value;
}
