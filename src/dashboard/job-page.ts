import type { DocwrightError } from '../errors.ts';
import type { AgentJob } from '../jobs/agent-job.ts';
import type { JobEvent } from '../jobs/events.ts';
import type { JobRunRow, RunDiffRow } from '../jobs/job-history.ts';
import type { ProjectView } from '../projects/projects.ts';
import { isWebLink } from '../web-link.ts';
import { renderDiff } from './diff-view.ts';
import { type Html, html } from './html.ts';
import { jobAnswer } from './job-answer.ts';
import { jobChecks } from './job-checks.ts';
import { csrfField, fieldError, formatNumber, formErrors, invalid, statusBadge, time } from './layout.ts';
import type { SignedIn } from './session.ts';
import { renderEvents } from './transcript.ts';

/** Events rendered on the page; a longer transcript is available whole from the API. */
export const TRANSCRIPT_LIMIT = 2000;

export interface JobPageData {
  project: ProjectView;
  job: AgentJob;
  runs: JobRunRow[];
  events: JobEvent[];
  diff: RunDiffRow | undefined;
  signedIn: SignedIn;
  now: Date;
  followUp: { values: Record<string, string | undefined>; error?: DocwrightError };
  /** A notice about the run under way (a follow-up just sent), shown only while the job is active. */
  progress?: string | undefined;
}

const runOutcome: Record<JobRunRow['status'], string> = {
  queued: 'Waiting for a worker',
  running: 'Running',
  succeeded: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** The job's status badge: the element labelled `Status`, whose text is the status value. */
export const jobStatus = (job: AgentJob): Html =>
  statusBadge(job.status, html`role="status" aria-labelledby="status-label" id="job-status"`);

/** `api#42`, `docs@1a2b3c4d5e6f`; a commit or range a run has not resolved yet says so. */
const changeName = (change: AgentJob['changes'][number]) =>
  change.kind === 'pull-request'
    ? `${change.repository}#${change.number}`
    : change.sha
      ? `${change.repository}@${change.sha.slice(0, 12)}`
      : `${change.repository} (${change.kind}, not resolved yet)`;

/** Pull request, branch, model, usage, error: the part of the page that changes when a run ends. */
export function jobDetails(job: AgentJob, now: Date): Html {
  // What is missing now may come while a run is under way, and no longer once the job has ended.
  const none = html`<span class="muted">${job.status === 'active' ? 'none yet' : 'none'}</span>`;
  // A job that found nothing to document says why, where nobody can miss it (docs/code-context.mdx).
  const ask = job.mode === 'ask';
  const noChange = !ask && job.status === 'completed' && !job.prLink && !job.branch && job.summary;
  // A question changes nothing: it has no pull request or branch to show (docs/questions.mdx).
  const edits = html`<dt>Pull request</dt><dd>${
    isWebLink(job.prLink)
      ? html`<a href="${job.prLink}" rel="noreferrer">Pull request</a> <span class="small muted wrap">${job.prLink}</span>`
      : html`<span class="muted">${job.status === 'active' ? 'When the run ends' : job.branch ? 'None (this host opens none)' : 'None: no files changed'}</span>`
  }</dd>
  <dt>Branch</dt><dd>${job.branch ? html`<code>${job.branch}</code>` : none}</dd>`;
  return html`${noChange && html`<div class="flash no-change" role="note" aria-labelledby="no-change-heading"><strong id="no-change-heading">No documentation change</strong><p>${job.summary}</p></div>`}<dl class="facts">
  <dt id="status-label">Status</dt><dd>${jobStatus(job)}</dd>
  ${ask ? html`<dt>Kind</dt><dd>Question: answered from the docs and the code, nothing changed</dd>` : edits}
  ${job.changes.length > 0 && html`<dt>Code changes</dt><dd><ul class="plain">${job.changes.map((change) => html`<li>${isWebLink(change.url) ? html`<a href="${change.url}" rel="noreferrer">${changeName(change)}</a>` : changeName(change)} <span class="small muted">${change.title ?? ''}</span></li>`)}</ul></dd>`}
  <dt>Base</dt><dd><code>${job.source.ref}</code></dd>
  <dt>Model</dt><dd>${job.model ? html`<code>${job.model}</code>` : html`<span class="muted">not configured</span>`}</dd>
  <dt>Tokens</dt><dd>${job.usage ? `${formatNumber(job.usage.inputTokens)} in · ${formatNumber(job.usage.outputTokens)} out` : none}</dd>
  <dt>Created</dt><dd>${time(job.createdAt, now)}</dd>
  <dt>Updated</dt><dd>${time(job.updatedAt, now)}</dd>
  ${jobChecks(job)}
  ${job.error && html`<dt>Error</dt><dd><span class="error-text"><code>${job.error.code}</code></span> ${job.error.message}</dd>`}
</dl>`;
}

/**
 * What each run was, in the transcript's words: the first instruction, a follow-up (numbered
 * among the follow-ups), or a retry — the failed run's instruction again (the retry's run repeats
 * it, jobs/follow-up.ts).
 */
function runNames(runs: JobRunRow[]): string[] {
  let followUps = 0;
  return runs.map((run, i) => {
    if (i === 0) return 'Instruction';
    const previous = runs[i - 1]!;
    if (previous.status === 'failed' && previous.prompt === run.prompt) {
      return `Retry of instruction ${previous.seq}`;
    }
    followUps++;
    return `Follow-up ${followUps}`;
  });
}

/** Each instruction of the job with its outcome. */
export function jobInstructions(runs: JobRunRow[], now: Date): Html {
  const names = runNames(runs);
  return html`<ol class="instructions">${runs.map(
    (run, i) => html`<li>
  <div class="small muted">${names[i]} · ${time(run.created_at, now)}</div>
  <p class="prompt">${run.prompt}</p>
  <div class="outcome"><strong>${runOutcome[run.status]}</strong>${run.summary && html`: ${run.summary}`}${run.error_code && html`: <code>${run.error_code}</code> ${run.error_message}`}</div>
</li>`,
  )}</ol>`;
}

/** A job is known by its first instruction, as a pull request by its title. */
export function jobTitle(prompt: string | undefined, jobId: string): string {
  const line = (prompt ?? '').trim().split('\n')[0]!.trim();
  if (!line) return `Job ${jobId.slice(-8)}`;
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

export function jobPage(data: JobPageData): Html {
  const { project, job, signedIn, now } = data;
  const base = `/projects/${project.id}/jobs/${job.id}`;
  const lastEvent = data.events.at(-1)?.id ?? 0;
  const live = job.status === 'active';
  const fields = data.followUp.error?.fields;
  const ask = job.mode === 'ask';
  const followUpLabel = ask ? 'Follow-up question' : 'Follow-up instruction';
  return html`<div class="crumbs"><a href="/">Projects</a> / <a href="/projects/${project.id}/jobs">${project.name}</a> / <span class="mono">${job.id}</span></div>
<div ${live && html`hx-ext="sse" sse-connect="${base}/live?after=${lastEvent}" sse-close="end"`}>
${live && data.progress && html`<div class="flash" role="status" id="job-progress" sse-swap="ended" hx-swap="delete">${data.progress}</div>`}
<div class="page-head">
  <div><h1>${jobTitle(data.runs[0]?.prompt, job.id)}</h1>
  <p class="mono small">${job.id}</p></div>
  <div class="actions">${
    job.status === 'failed' &&
    html`<form method="post" action="${base}/retry">${csrfField(signedIn)}<button type="submit" class="primary" aria-describedby="retry-hint">Retry</button><span id="retry-hint" hidden>Runs the last instruction again on this job</span></form>`
  }${
    job.status !== 'archived' &&
    html`<form method="post" action="${base}/archive">${csrfField(signedIn)}<button type="submit" class="danger">Archive</button></form>`
  }</div>
</div>
<div class="split">
  <aside class="panel" aria-labelledby="details-heading">
    <h2 id="details-heading">Details</h2>
    <div id="job-details" sse-swap="details">${jobDetails(job, now)}</div>
  </aside>
  <div>
    ${
      ask &&
      html`<section class="panel" aria-labelledby="answer-heading">
      <h2 id="answer-heading">Answer</h2>
      <div id="job-answer" sse-swap="answer">${jobAnswer(job, project)}</div>
    </section>`
    }
    <section class="panel" aria-labelledby="instructions-heading">
      <h2 id="instructions-heading">${ask ? 'Questions' : 'Instructions'}</h2>
      <div id="job-instructions" sse-swap="instructions">${jobInstructions(data.runs, now)}</div>
    </section>
    ${
      job.status !== 'archived' &&
      html`<section class="panel" aria-labelledby="follow-up-heading">
      <h2 id="follow-up-heading">Follow-up</h2>
      ${formErrors(data.followUp.error?.message, fields, { prompt: followUpLabel })}
      <form method="post" action="${base}/message" class="stack">
        ${csrfField(signedIn)}
        <div class="field"><label for="follow-up">${followUpLabel}</label>
          <textarea id="follow-up" name="prompt" rows="3" required ${invalid(fields, 'prompt', 'follow-up-hint')}>${data.followUp.values.prompt ?? ''}</textarea>
          <p class="hint" id="follow-up-hint">${ask ? 'The agent answers it knowing the earlier questions and answers' : 'The agent continues on the same branch and pull request'}${live ? ' once the current run ends' : ''}.</p>
          ${fieldError(fields, 'prompt')}</div>
        <div><button type="submit" class="primary">Send</button></div>
      </form>
    </section>`
    }
    ${
      !ask &&
      html`<section class="panel" aria-labelledby="diff-heading">
      <h2 id="diff-heading">Changes</h2>
      <div id="job-diff" sse-swap="diff">${renderDiff(data.diff, { rawHref: `${base}/diff` })}</div>
    </section>`
    }
    <section class="panel" aria-labelledby="transcript-heading">
      <h2 id="transcript-heading">Transcript</h2>
      ${data.events.length >= TRANSCRIPT_LIMIT && html`<p class="small muted">The first ${TRANSCRIPT_LIMIT} events; the API has all of them.</p>`}
      <ol class="transcript" id="transcript" sse-swap="transcript" hx-swap="beforeend" aria-live="off">${renderEvents(data.events)}</ol>
    </section>
  </div>
</div>
</div>`;
}
