/**
 * `/projects/{projectId}/automations` (docs/automations.mdx): the project's automations with their last
 * outcome, enable/disable, `Run now`, the `New automation` form (automation-form.ts), and each
 * automation's page with its runs (outcome, reason, job link) and the webhook deliveries it
 * watches (delivery-table.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import type { Automation, AutomationRun } from '../automations/automation.ts';
import { DocwrightError } from '../errors.ts';
import { type AutomationForm, automationForm, automationInput, presetValues } from './automation-form.ts';
import { deliveriesSection, takesDeliveries, watchedHookNames } from './delivery-table.ts';
import { type Html, html } from './html.ts';
import { csrfField, page, projectHeader, sendHtml, serverBaseUrl, time } from './layout.ts';
import { projectOf } from './projects.ts';
import { setFlash, takeFlash } from './session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<
  App,
  | 'automations'
  | 'config'
  | 'contextRepositories'
  | 'jobHistory'
  | 'now'
  | 'projects'
  | 'sessions'
  | 'webhooks'
>;

type ProjectParams = { Params: { projectId: string } };
type AutomationParams = { Params: { projectId: string; id: string } };

const RUNS_PAGE_SIZE = 25;

/** When an automation runs, for people. */
export function triggerSummary(a: Automation): string {
  const t = a.trigger;
  switch (t.type) {
    case 'code-change':
      return `Merged changes of ${t.repositories.length ? t.repositories.join(', ') : 'every context repository'}${t.paths.length ? ` touching ${t.paths.join(', ')}` : ''}`;
    case 'schedule':
      return `Schedule ${t.cron} (${t.timeZone})${t.batch ? ', batched' : ''}`;
    case 'docs-push':
      return `Pushes to the docs${t.paths.length ? ` touching ${t.paths.join(', ')}` : ''}`;
    default:
      return 'Manual only';
  }
}

/** A run's outcome; with its reason where no column of its own shows it (the list). */
const outcomeBadge = (run: AutomationRun | undefined, withReason = true): Html =>
  run
    ? html`<span class="status outcome-${run.outcome}">${run.outcome}</span>${withReason && run.reason && html` <span class="small muted">(${run.reason})</span>`}`
    : html`<span class="muted">never run</span>`;

async function automationsPage(
  app: AppUses,
  request: FastifyRequest,
  reply: FastifyReply,
  projectId: string,
  form: { values: AutomationForm; error?: DocwrightError },
) {
  const project = await projectOf(app, projectId);
  const flash = takeFlash(request, reply, app);
  const now = app.now();
  const automations = await app.automations.list(project.id);
  const latest = await app.automations.latestRuns(project.id);
  const base = `/projects/${project.id}/automations`;
  const csrf = csrfField(request.signedIn!);
  const body = html`${projectHeader(project, 'automations')}
<p class="muted">Automations start jobs by themselves: when code merges into a context repository, on a schedule, when the docs are pushed, or when run by hand. Point your code host’s webhooks at <span class="mono wrap">${serverBaseUrl(app.config, request)}/hooks/${project.id}/{name}</span> (<code>{name}</code>: a context repository, or <code>docs</code>; the settings page shows each one’s); repositories are also polled.</p>
<section class="panel" aria-labelledby="automations-heading">
  <h2 id="automations-heading">Automations</h2>
  ${
    automations.length === 0
      ? html`<p class="empty">No automations yet. Create one below, from a preset or from scratch.</p>`
      : html`<table class="hooks-table">
    <thead><tr><th scope="col">Name</th><th scope="col">Runs on</th><th scope="col">Last outcome</th><th scope="col">State</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
    <tbody>${automations.map((a) => {
      const last = latest.get(a.id);
      return html`<tr>
      <td data-label="Name"><a href="${base}/${a.id}">${a.name}</a></td>
      <td data-label="Runs on" class="small">${triggerSummary(a)}</td>
      <td data-label="Last outcome"><div>${outcomeBadge(last)}${last && html` <span class="small muted">${time(last.createdAt, now)}</span>`}</div></td>
      <td data-label="State"><div><span class="status status-${a.enabled ? 'enabled' : 'disabled'}">${a.enabled ? 'enabled' : 'disabled'}</span></div></td>
      <td data-label=""><div class="actions">
        <form method="post" action="${base}/${a.id}/run">${csrf}<button type="submit" class="small-button">Run now<span class="skip"> ${a.name}</span></button></form>
        <form method="post" action="${base}/${a.id}/${a.enabled ? 'disable' : 'enable'}">${csrf}<button type="submit" class="small-button">${a.enabled ? 'Disable' : 'Enable'}<span class="skip"> ${a.name}</span></button></form>
      </div></td>
    </tr>`;
    })}</tbody>
  </table>`
  }
</section>
${automationForm(project.id, request, form.values, form.error)}`;
  return sendHtml(
    reply,
    page({
      title: `Automations · ${project.name}`,
      signedIn: request.signedIn,
      section: 'projects',
      flash,
      body,
    }),
    form.error?.status ?? 200,
  );
}

function runsTable(projectId: string, runs: AutomationRun[], now: Date): Html {
  return html`<table>
  <thead><tr><th scope="col">Run</th><th scope="col">Trigger</th><th scope="col">Outcome</th><th scope="col">Reason</th><th scope="col">Job</th><th scope="col">When</th></tr></thead>
  <tbody>${runs.map(
    (r) => html`<tr>
    <td data-label="Run" class="mono small"><div>${r.id}</div></td>
    <td data-label="Trigger"><div><span class="nowrap">${r.trigger.type}</span>${r.trigger.changes.length > 0 && html`<div class="small muted">${r.trigger.changes.map((c) => `${c.repository} ${'pullRequest' in c ? `#${c.pullRequest}` : 'commit' in c ? c.commit.slice(0, 12) : c.range}`).join(', ')}</div>`}</div></td>
    <td data-label="Outcome"><div>${outcomeBadge(r, false)}</div></td>
    <td data-label="Reason"><div>${r.reason ?? html`<span class="muted">—</span>`}</div></td>
    <td data-label="Job"><div>${r.jobId ? html`<a href="/projects/${projectId}/jobs/${r.jobId}" class="mono small">${r.jobId}</a>` : html`<span class="muted">none</span>`}</div></td>
    <td data-label="When"><div>${time(r.trigger.scheduledFor ?? r.createdAt, now)}</div></td>
  </tr>`,
  )}</tbody>
</table>`;
}

export function registerAutomationPages(server: FastifyInstance, app: AppUses): void {
  const service = app.automations;

  server.get<ProjectParams & { Querystring: { preset?: string } }>(
    '/projects/:projectId/automations',
    async (request, reply) =>
      automationsPage(app, request, reply, request.params.projectId, {
        values: presetValues(request.query.preset),
      }),
  );

  server.post<ProjectParams & { Body: AutomationForm }>(
    '/projects/:projectId/automations',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const form = request.body ?? {};
      let created: Automation;
      try {
        created = await service.create(project.id, automationInput(form));
      } catch (error) {
        if (error instanceof DocwrightError && error.status === 400) {
          return automationsPage(app, request, reply, project.id, { values: form, error });
        }
        throw error;
      }
      setFlash(reply, app, request.signedIn!, { notice: `Automation “${created.name}” created.` });
      return reply.redirect(`/projects/${project.id}/automations/${created.id}`, 303);
    },
  );

  server.get<AutomationParams & { Querystring: { cursor?: string } }>(
    '/projects/:projectId/automations/:id',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const automation = await service.get(project.id, request.params.id);
      const cursor = typeof request.query.cursor === 'string' ? request.query.cursor : undefined;
      const runs = await service
        .runs(project.id, automation.id, { limit: String(RUNS_PAGE_SIZE), cursor })
        .catch(() => service.runs(project.id, automation.id, { limit: String(RUNS_PAGE_SIZE) }));
      const deliveries = takesDeliveries(automation)
        ? await app.automations.deliveries.recent(project.id, { names: watchedHookNames(automation) })
        : undefined;
      const flash = takeFlash(request, reply, app);
      const now = app.now();
      const base = `/projects/${project.id}/automations/${automation.id}`;
      const csrf = csrfField(request.signedIn!);
      const trail = html`<a href="/projects/${project.id}/automations">Automations</a> / ${automation.name}`;
      const body = html`${projectHeader(project, 'automations', '', trail)}
<div class="page-head"><div><h2>${automation.name}</h2><p>${triggerSummary(automation)} · <span class="status status-${automation.enabled ? 'enabled' : 'disabled'}">${automation.enabled ? 'enabled' : 'disabled'}</span>${automation.draft && ' · draft pull requests'}</p></div>
  <div class="actions">
    <form method="post" action="${base}/run">${csrf}<button type="submit" class="primary">Run now</button></form>
    <form method="post" action="${base}/${automation.enabled ? 'disable' : 'enable'}">${csrf}<button type="submit">${automation.enabled ? 'Disable' : 'Enable'}</button></form>
    <form method="post" action="${base}/delete">${csrf}<button type="submit" class="danger">Delete</button></form>
  </div></div>
<section class="panel" aria-labelledby="instruction-heading"><h3 id="instruction-heading">Instruction</h3><pre class="wrap">${automation.instruction}</pre></section>
<section class="panel" aria-labelledby="runs-heading"><h3 id="runs-heading">Runs</h3>
  ${runs.runs.length === 0 ? html`<p class="muted">No runs yet.</p>` : runsTable(project.id, runs.runs, now)}
  <nav class="pager" aria-label="Pages of runs">
    ${cursor ? html`<a href="${base}">← Newest</a>` : html`<span></span>`}
    ${runs.nextCursor && html`<a href="${base}?cursor=${runs.nextCursor}">Older →</a>`}
  </nav>
</section>
${deliveries && deliveriesSection(deliveries, now)}`;
      return sendHtml(
        reply,
        page({
          title: `${automation.name} · ${project.name}`,
          signedIn: request.signedIn,
          section: 'projects',
          flash,
          body,
        }),
      );
    },
  );

  const action = (
    name: string,
    run: (projectId: string, id: string) => Promise<string>,
    back: 'list' | 'page',
  ) =>
    server.post<AutomationParams>(`/projects/:projectId/automations/:id/${name}`, async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const automation = await service.get(project.id, request.params.id);
      let notice: string;
      try {
        notice = await run(project.id, automation.id);
      } catch (error) {
        if (!(error instanceof DocwrightError) || error.status >= 500) throw error;
        notice = `${automation.name}: ${error.message}`;
      }
      setFlash(reply, app, request.signedIn!, { notice });
      const referer = URL.parse(request.headers.referer ?? '', 'http://x')?.pathname;
      const page = `/projects/${project.id}/automations/${automation.id}`;
      return reply.redirect(
        back === 'page' && referer === page ? page : `/projects/${project.id}/automations`,
        303,
      );
    });

  action(
    'run',
    async (projectId, id) => {
      const started = await service.trigger(projectId, id, {});
      return `Run ${started.runId} started job ${started.jobId}.`;
    },
    'page',
  );
  action(
    'enable',
    async (p, id) => `${(await service.update(p, id, { enabled: true })).name} is enabled.`,
    'page',
  );
  action(
    'disable',
    async (p, id) =>
      `${(await service.update(p, id, { enabled: false })).name} is disabled: changes are recorded skipped (disabled).`,
    'page',
  );
  action('delete', async (p, id) => `${(await service.delete(p, id)).name} deleted, with its runs.`, 'list');
}
