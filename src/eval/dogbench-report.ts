/**
 * The DogBench parts of the HTML report (`eval --dogbench --report`): DogBench's summary figures
 * in its names, and per item its decision, whether it is mergeable, and each criterion's verdict
 * with the quotes the judge backed it with.
 */
import { type Html, html } from '../dashboard/html.ts';
import type { DogBenchItemReport } from './dogbench-item.ts';
import type { DogBenchSummary } from './dogbench-score.ts';

const figure = (value: number | null, unit = '') =>
  value === null ? '—' : `${Math.round(value * 10) / 10}${unit}`;

export function dogbenchSummaryStats(summary: DogBenchSummary): Html {
  return html`<dl class="stats">
    <div><dt>Composite</dt><dd>${figure(summary.composite_score)}</dd></div>
    <div><dt>Delivered patch quality</dt><dd>${figure(summary.delivered_patch_quality)}</dd></div>
    <div><dt>No-op recall</dt><dd>${figure(summary.no_op_recall, '%')}</dd></div>
    <div><dt>P0-clean delivery</dt><dd>${figure(summary.p0_clean_delivery_percent, '%')}</dd></div>
  </dl>
  <p class="small muted">Scored by DogBench's formula and judge.${summary.complete ? '' : ' Not every item ran: no composite.'} Decisions right: ${figure(summary.decision_accuracy_percent, '%')}.</p>`;
}

const verdictText = (v: NonNullable<DogBenchItemReport['verdicts']>[number]) =>
  v.scoring_type === 'deduction_only'
    ? v.violated
      ? 'violated'
      : 'clean'
    : v.scoring_type === 'conditional' && !v.triggered
      ? 'not triggered'
      : (v.verdict ?? '—');

export function dogbenchItemSection(item: DogBenchItemReport): Html {
  return html`<dl class="facts">
    <dt>Decision</dt><dd>${item.decision ?? 'none (failed)'} · ${item.decision_correct ? 'right' : 'wrong'}</dd>
    <dt>Mergeable</dt><dd>${item.mergeable ? 'yes' : 'no'}${item.blocking_p0.length > 0 && html` (P0 failed: ${item.blocking_p0.join(', ')})`}</dd>
    ${item.judgeError && html`<dt>Judge</dt><dd><span class="error-text">${item.judgeError}</span></dd>`}
  </dl>
  ${
    item.verdicts &&
    html`<table class="checks">
<thead><tr><th scope="col">Criterion</th><th scope="col">Verdict</th><th scope="col">Evidence</th><th scope="col">Reason</th></tr></thead>
<tbody>${item.verdicts.map(
      (v) => html`<tr>
  <td data-label="Criterion" class="mono">${v.id} <span class="muted small">${v.scoring_type}</span></td>
  <td data-label="Verdict">${verdictText(v)}</td>
  <td data-label="Evidence"><p class="detail small">${[
    v.triggering_patch_quote,
    v.supporting_patch_quote,
    v.contradicting_patch_quote,
  ]
    .filter(Boolean)
    .map((q) => `“${q}”`)
    .join('\n')}${v.missing_requirement ? `Missing: ${v.missing_requirement}` : ''}</p></td>
  <td data-label="Reason"><p class="detail small">${v.reason}</p></td>
</tr>`,
    )}</tbody>
</table>`
  }`;
}
