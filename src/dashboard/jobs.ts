import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { type AgentJob, JOB_STATUSES, type JobStatus } from '../jobs/agent-job.ts';
import { requestFingerprint } from '../jobs/idempotency.ts';
import type { ProjectView } from '../projects/projects.ts';
import { isWebLink } from '../web-link.ts';
import { archiveConfirmation } from './archive-confirm.ts';
import { html, type Renderable } from './html.ts';
import { jobPage, jobTitle, TRANSCRIPT_LIMIT } from './job-page.ts';
import {
  ariaCurrent,
  csrfField,
  fieldError,
  formErrors,
  invalid,
  oneLine,
  page,
  projectHeader,
  sendHtml,
  statusBadge,
  time,
} from './layout.ts';
import { projectOf } from './projects.ts';
import { setFlash, takeFlash } from './session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<
  App,
  'config' | 'contextRepositories' | 'jobHistory' | 'jobs' | 'now' | 'projects' | 'sessions' | 'webhooks'
>;

type ProjectParams = { Params: { projectId: string } };
type JobParams = { Params: { projectId: string; jobId: string } };
type Form = Record<string, string | undefined>;

export const JOBS_PAGE_SIZE = 25;

function newJobForm(
  app: AppUses,
  project: ProjectView,
  request: FastifyRequest,
  values: Form,
  error?: DocwrightError,
) {
  const fallback = project.model ?? app.config.defaultModel;
  // Each model once; the default is the first option already.
  const models = [...new Set(project.settings.allowedModels)].filter((m) => m !== fallback);
  const fields = error?.fields;
  return html`<section class="panel" aria-labelledby="new-job-heading">
  <h2 id="new-job-heading">New job</h2>
  ${formErrors(error?.message, fields, { prompt: 'Instruction', ref: 'Base branch', model: 'Model' })}
  <form method="post" action="/projects/${project.id}/jobs" class="stack" aria-labelledby="new-job-heading">
    ${csrfField(request.signedIn!)}
    <input type="hidden" name="idempotencyKey" value="${values.idempotencyKey ?? randomBytes(16).toString('hex')}">
    <div class="field"><label for="prompt">Instruction</label>
      <textarea id="prompt" name="prompt" rows="4" required placeholder="e.g. Document the new rate limit of 100 requests per hour on the API overview page." ${invalid(fields, 'prompt', 'prompt-hint')}>${values.prompt ?? ''}</textarea>
      <p class="hint" id="prompt-hint">Say what should change in the docs; the agent opens a pull request.</p>${fieldError(fields, 'prompt')}</div>
    <div class="row">
      <div class="field"><label for="ref">Base branch <span class="muted">(optional)</span></label>
        <input id="ref" name="ref" type="text" spellcheck="false" placeholder="${project.ref}" value="${values.ref ?? ''}" ${invalid(fields, 'ref')}>${fieldError(fields, 'ref')}</div>
      <div class="field"><label for="model">Model</label>
        <select id="model" name="model" ${invalid(fields, 'model')}>
          <option value="">${fallback ? `Project default (${fallback})` : 'None configured: set one in Settings'}</option>
          ${models.map((m) => html`<option value="${m}" ${values.model === m && html`selected`}>${m}</option>`)}
        </select>${fieldError(fields, 'model')}</div>
    </div>
    <label class="check"><input type="checkbox" name="draft" ${(values.draft ?? (project.settings.draft ? 'on' : '')) === 'on' && html`checked`}> Open the pull request as a draft</label>
    <label class="check"><input type="checkbox" name="ask" aria-describedby="ask-hint" ${values.ask === 'on' && html`checked`}> Ask a question instead</label>
    <p class="hint" id="ask-hint">The agent answers the text above from the docs and the code, citing the lines it rests on, and changes nothing.</p>
    <div><button type="submit" class="primary">Start job</button></div>
  </form>
</section>`;
}

function jobRow(project: ProjectView, job: AgentJob, prompt: string | undefined, now: Date): Renderable {
  const href = `/projects/${project.id}/jobs/${job.id}`;
  return html`<li>
  <span id="status-${job.id}" sse-swap="status-${job.id}">${statusBadge(job.status)}</span>
  <a class="title" href="${href}">${prompt ? oneLine(prompt) : job.id}</a>
  ${time(job.createdAt, now)}
  <div class="meta"><span class="mono">${job.id}</span>${job.mode === 'ask' && ' · question'} · ${job.model || 'no model'}${job.branch && html` · <span class="mono">${job.branch}</span>`}${isWebLink(job.prLink) && html` · <a href="${job.prLink}" rel="noreferrer">pull request</a>`}${job.error && html` · <span class="error-text">${job.error.code}</span>`}</div>
</li>`;
}

async function jobsListPage(
  app: AppUses,
  request: FastifyRequest,
  reply: FastifyReply,
  project: ProjectView,
  query: Form,
  form: { values: Form; error?: DocwrightError } = { values: {} },
) {
  const status = JOB_STATUSES.includes(query.status as JobStatus) ? (query.status as JobStatus) : undefined;
  const cursor = query.cursor || undefined;
  const list = await app.jobs.list(project.id, { status, cursor, limit: JOBS_PAGE_SIZE });
  const prompts = await app.jobHistory.firstPrompts(list.jobs.map((j) => j.id));
  const now = app.now();
  const base = `/projects/${project.id}/jobs`;
  const filter = (value: JobStatus | undefined, label: string) =>
    html`<a href="${value ? `${base}?status=${value}` : base}" ${ariaCurrent(status === value)}>${label}</a>`;
  const active = list.jobs.filter((j) => j.status === 'active').map((j) => j.id);
  const rows = list.jobs.map((job) => jobRow(project, job, prompts.get(job.id), now));
  const live =
    active.length > 0
      ? html`hx-ext="sse" sse-connect="${base}/live?ids=${active.join(',')}" sse-close="end"`
      : '';
  const body = html`${projectHeader(project, 'jobs')}
${newJobForm(app, project, request, form.values, form.error)}
<section aria-labelledby="jobs-heading">
  <h2 id="jobs-heading">Jobs</h2>
  <nav class="filters" aria-label="Filter by status">${filter(undefined, 'All')}${JOB_STATUSES.map((s) => filter(s, s[0]!.toUpperCase() + s.slice(1)))}</nav>
  ${
    list.jobs.length === 0
      ? html`<div class="panel empty"><h2>${status || cursor ? 'No jobs here' : 'No jobs yet'}</h2>
      <p>${status ? html`No ${status} jobs. <a href="${base}">Show all jobs</a>.` : 'Write an instruction above and the agent will get to work.'}</p></div>`
      : html`<ol class="jobs" ${live}>${rows}</ol>`
  }
  <nav class="pager" aria-label="Pages">
    ${cursor ? html`<a href="${status ? `${base}?status=${status}` : base}">← Newest</a>` : html`<span></span>`}
    ${list.nextCursor && html`<a href="${base}?${new URLSearchParams({ ...(status ? { status } : {}), cursor: list.nextCursor }).toString()}">Older →</a>`}
  </nav>
</section>`;
  return sendHtml(
    reply,
    page({
      title: `Jobs · ${project.name}`,
      signedIn: request.signedIn,
      section: 'projects',
      flash: takeFlash(request, reply, app),
      body,
    }),
    form.error?.status ?? 200,
  );
}

async function loadJob(app: AppUses, projectId: string, jobId: string) {
  const project = await projectOf(app, projectId);
  const job = await app.jobs.get(project.id, jobId);
  return { project, job };
}

export async function renderJobPage(
  app: AppUses,
  request: FastifyRequest,
  reply: FastifyReply,
  params: JobParams['Params'],
  followUp: { values: Form; error?: DocwrightError } = { values: {} },
) {
  const { project, job } = await loadJob(app, params.projectId, params.jobId);
  const { progress, ...flash } = takeFlash(request, reply, app);
  const [runs, events, diff] = await Promise.all([
    app.jobHistory.runs(job.id),
    app.jobHistory.transcript(job.id, { limit: TRANSCRIPT_LIMIT }),
    app.jobHistory.latestDiff(job.id),
  ]);
  const body = jobPage({
    project,
    job,
    runs,
    events,
    diff,
    signedIn: request.signedIn!,
    now: app.now(),
    followUp,
    progress,
  });
  return sendHtml(
    reply,
    page({
      title: `Job ${job.id.slice(-8)} · ${project.name}`,
      signedIn: request.signedIn,
      section: 'projects',
      flash,
      body,
    }),
    followUp.error?.status ?? 200,
  );
}

/** Errors a person can fix in the form are shown with it; the rest are error pages. */
const formProblem = (error: unknown): error is DocwrightError =>
  error instanceof DocwrightError && [400, 409, 422, 429].includes(error.status);

/** `/projects/{projectId}/jobs` and the job page with its forms. */
export function registerJobPages(server: FastifyInstance, app: AppUses): void {
  server.get<ProjectParams & { Querystring: Form }>('/projects/:projectId/jobs', async (request, reply) => {
    const project = await projectOf(app, request.params.projectId);
    return jobsListPage(app, request, reply, project, request.query);
  });

  // The same job service as the API: validation, rate limit and Idempotency-Key alike.
  server.post<ProjectParams & { Body: Form }>('/projects/:projectId/jobs', async (request, reply) => {
    const project = await projectOf(app, request.params.projectId);
    const form = request.body ?? {};
    const body: Record<string, unknown> = { prompt: form.prompt ?? '' };
    if (form.ref?.trim()) body.ref = form.ref.trim();
    if (form.model) body.model = form.model;
    // A question (docs/questions.mdx) opens no pull request, so it takes no draft setting.
    if (form.ask === 'on') body.mode = 'ask';
    else body.draft = form.draft === 'on';
    const key = form.idempotencyKey;
    const path = `/projects/${project.id}/jobs`;
    const idempotency =
      key && /^[0-9a-f]{32}$/.test(key)
        ? { key: `dashboard-${key}`, fingerprint: requestFingerprint('POST', path, body) }
        : undefined;
    try {
      const { job } = await app.jobs.create(project.id, body, idempotency);
      return reply.redirect(`${path}/${job.id}`, 303);
    } catch (error) {
      if (!formProblem(error)) throw error;
      if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
      return jobsListPage(app, request, reply, project, {}, { values: form, error: friendly(error) });
    }
  });

  server.get<JobParams>('/projects/:projectId/jobs/:jobId', async (request, reply) =>
    renderJobPage(app, request, reply, request.params),
  );

  server.get<JobParams>('/projects/:projectId/jobs/:jobId/diff', async (request, reply) => {
    const { project, job } = await loadJob(app, request.params.projectId, request.params.jobId);
    const diff = await app.jobs.diff(project.id, job.id);
    return reply.type('text/x-diff; charset=utf-8').send(diff.diff);
  });

  server.post<JobParams & { Body: Form }>(
    '/projects/:projectId/jobs/:jobId/message',
    async (request, reply) => {
      const { project, job } = await loadJob(app, request.params.projectId, request.params.jobId);
      const form = request.body ?? {};
      try {
        await app.jobs.message(project.id, job.id, { prompt: form.prompt ?? '' });
      } catch (error) {
        if (!formProblem(error)) throw error;
        if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
        return renderJobPage(app, request, reply, request.params, { values: form, error: friendly(error) });
      }
      setFlash(reply, app, request.signedIn!, { progress: 'Follow-up sent: the agent is working on it.' });
      return reply.redirect(`/projects/${project.id}/jobs/${job.id}`, 303);
    },
  );

  // The API's retry (POST …/job/{id}/retry): the failed run's instruction again, rate limit alike.
  server.post<JobParams>('/projects/:projectId/jobs/:jobId/retry', async (request, reply) => {
    const { project, job } = await loadJob(app, request.params.projectId, request.params.jobId);
    try {
      await app.jobs.retry(project.id, job.id, {});
    } catch (error) {
      if (!formProblem(error)) throw error;
      if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
      return renderJobPage(app, request, reply, request.params, { values: {}, error: friendly(error) });
    }
    setFlash(reply, app, request.signedIn!, {
      notice: 'Retrying: the agent runs the last instruction again.',
    });
    return reply.redirect(`/projects/${project.id}/jobs/${job.id}`, 303);
  });

  server.post<JobParams & { Body: { confirm?: string } }>(
    '/projects/:projectId/jobs/:jobId/archive',
    async (request, reply) => {
      const { project, job } = await loadJob(app, request.params.projectId, request.params.jobId);
      if (job.status === 'active' && request.body?.confirm !== 'yes') {
        // A running job's run would be cancelled: ask first (archive-confirm.ts).
        const [first] = await app.jobHistory.runs(job.id);
        return sendHtml(
          reply,
          page({
            title: `Archive ${job.id} · ${project.name}`,
            signedIn: request.signedIn,
            section: 'projects',
            body: archiveConfirmation(project, job, jobTitle(first?.prompt, job.id), request.signedIn!),
          }),
        );
      }
      await app.jobs.archive(project.id, job.id);
      setFlash(reply, app, request.signedIn!, {
        notice: job.status === 'active' ? 'Job archived: its run was cancelled.' : 'Job archived.',
      });
      return reply.redirect(`/projects/${project.id}/jobs/${job.id}`, 303);
    },
  );
}

/** The service's message, with what to do about it where the message alone does not say. */
function friendly(error: DocwrightError): DocwrightError {
  const messages: Partial<Record<DocwrightError['code'], string>> = {
    'rate-limited': `This project has used its jobs for the hour. ${error.retryAfter ? `Try again in ${Math.ceil(error.retryAfter / 60)} minute${Math.ceil(error.retryAfter / 60) === 1 ? '' : 's'}` : 'Try again later'}, or raise “Jobs per hour” in the project settings.`,
    'job-busy': 'The agent is still working on this job. Send the follow-up once the run has ended.',
    'job-archived': 'This job is archived and takes no more instructions. Start a new job instead.',
    'job-not-failed': 'Only a failed job can be retried. Send a follow-up instruction to change this one.',
  };
  const message = messages[error.code];
  return message
    ? new DocwrightError(error.code, message, { retryAfter: error.retryAfter, fields: error.fields })
    : error;
}
