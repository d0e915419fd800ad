import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { isProjectId } from '../ids.ts';
import { PROJECT_DEFAULTS, type ProjectView } from '../projects/projects.ts';
import { refWarning } from '../projects/ref-check.ts';
import type { WebhookEndpointView } from '../webhooks/webhooks.ts';
import {
  type ContextFormState,
  contextRepositoriesSection,
  registerContextRepositoryRoutes,
  requestBaseUrl,
} from './context-repositories.ts';
import { html } from './html.ts';
import { formatNumber, page, projectHeader, sendHtml } from './layout.ts';
import { type ProjectForm, projectForm, projectFormValues, projectInput } from './project-form.ts';
import { type Flash, type SignedIn, setFlash, takeFlash } from './session.ts';
import { registerSlackLinkRoutes, type SlackFormState, slackSection } from './slack-links.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<
  App,
  'config' | 'contextRepositories' | 'jobHistory' | 'projects' | 'sessions' | 'slack' | 'webhooks'
>;

type ProjectParams = { Params: { projectId: string } };

/** The project of a dashboard path, or a 404 page. */
export async function projectOf(app: Pick<App, 'projects'>, projectId: string): Promise<ProjectView> {
  if (!isProjectId(projectId))
    throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
  return app.projects.get(projectId);
}

/** The form's pre-filled values: the project service's defaults. */
const NEW_PROJECT_DEFAULTS: ProjectForm = {
  docsDir: PROJECT_DEFAULTS.docsDir,
  writable: PROJECT_DEFAULTS.writable.join('\n'),
  branchPrefix: PROJECT_DEFAULTS.branchPrefix,
  authorName: PROJECT_DEFAULTS.authorName,
  authorEmail: PROJECT_DEFAULTS.authorEmail,
};

/** The settings page's part on webhooks (docs/webhooks.mdx): the endpoints, managed on their own page. */
function webhooksSummary(project: ProjectView, endpoints: WebhookEndpointView[]) {
  return html`<section class="panel settings-extra" id="webhooks" aria-labelledby="webhooks-heading">
  <h2 id="webhooks-heading">Webhooks</h2>
  <p>Signed POSTs to your endpoints when jobs are created, complete, fail or are archived.</p>
  ${
    endpoints.length === 0
      ? html`<p class="muted">No endpoints yet.</p>`
      : html`<ul class="endpoint-list">${endpoints.map(
          (e) =>
            html`<li><span class="mono wrap">${e.url}</span> <span class="status status-${e.enabled ? 'enabled' : 'disabled'}">${e.enabled ? 'enabled' : 'disabled'}</span></li>`,
        )}</ul>`
  }
  <p><a class="button" href="/projects/${project.id}/webhooks">Manage webhooks and deliveries</a></p>
</section>`;
}

/** The settings page's last section: a way to the deletion (project-delete.ts), not the deletion itself. */
function deleteProjectSection(project: ProjectView) {
  return html`<section class="panel settings-extra danger-zone" aria-labelledby="delete-heading">
  <h2 id="delete-heading">Delete project</h2>
  <p>Removes the project with its jobs, transcripts, API keys, webhooks and context repositories. Running jobs are cancelled.</p>
  <p><a class="button danger" href="/projects/${project.id}/delete">Delete this project…</a></p>
</section>`;
}

/** `/`, `/projects/new` and `/projects/{projectId}/settings`. */
export function registerProjectPages(server: FastifyInstance, app: AppUses): void {
  server.get('/', async (request, reply) => {
    const projects = await app.projects.list();
    const stats = await app.jobHistory.projectStats(projects.map((p) => p.id));
    const cards = projects.map((project) => {
      const s = stats.get(project.id)!;
      return html`<a class="panel card" href="/projects/${project.id}/jobs">
  <h2>${project.name}</h2>
  <p class="muted mono small wrap">${project.repository}</p>
  <dl class="stats">
    <div><dt>Active</dt><dd>${formatNumber(s.active)}</dd></div>
    <div><dt>Completed 24&nbsp;h</dt><dd>${formatNumber(s.completed)}</dd></div>
    <div><dt>Failed 24&nbsp;h</dt><dd>${formatNumber(s.failed)}</dd></div>
    <div><dt>Tokens 30&nbsp;d</dt><dd>${formatNumber(s.tokens)}</dd></div>
  </dl>
</a>`;
    });
    const body = html`<div class="page-head">
  <div><h1>Projects</h1><p>Each project is a documentation repository the agent edits.</p></div>
  <a class="button primary" href="/projects/new">New project</a>
</div>
${
  projects.length === 0
    ? html`<div class="panel empty">
  <h2>No projects yet</h2>
  <p>Add the repository of your docs site to start giving the agent instructions.</p>
  <p><a class="button primary" href="/projects/new">Create your first project</a></p>
</div>`
    : html`<div class="grid">${cards}</div>`
}`;
    return sendHtml(
      reply,
      page({
        title: 'Projects',
        signedIn: request.signedIn,
        section: 'projects',
        flash: takeFlash(request, reply, app),
        body,
      }),
    );
  });

  const newProjectPage = (signedIn: SignedIn, values: ProjectForm, error?: DocwrightError) =>
    page({
      title: 'New project',
      signedIn,
      section: 'projects',
      body: html`<div class="crumbs"><a href="/">Projects</a> / New</div>
<div class="page-head"><div><h1>New project</h1><p>Where the agent works and how it opens pull requests.</p></div></div>
${projectForm({ signedIn, action: '/projects/new', submitLabel: 'Create project', values, error })}`,
    });

  server.get('/projects/new', async (request, reply) =>
    sendHtml(reply, newProjectPage(request.signedIn!, NEW_PROJECT_DEFAULTS)),
  );

  server.post<{ Body: ProjectForm }>('/projects/new', async (request, reply) => {
    const form = request.body ?? {};
    let project: ProjectView;
    try {
      project = await app.projects.create(projectInput(form, 'create'));
    } catch (error) {
      if (error instanceof DocwrightError && error.status === 400) {
        return sendHtml(reply, newProjectPage(request.signedIn!, form, error), 400);
      }
      throw error;
    }
    const missingRef = await refWarning(
      project,
      await app.projects.getSecrets(project.id),
      'change the Base branch in Settings',
    );
    setFlash(reply, app, request.signedIn!, {
      notice: `Project ${project.name} created. ${missingRef ? `Warning: ${missingRef}.` : 'Give the agent its first instruction below, or create an API key to use it from the API.'}`,
    });
    return reply.redirect(`/projects/${project.id}/jobs`, 303);
  });

  const settingsPage = async (
    request: FastifyRequest,
    project: ProjectView,
    values: ProjectForm,
    options: {
      error?: DocwrightError;
      flash?: Flash;
      contextForm?: ContextFormState;
      slackForm?: SlackFormState;
    } = {},
  ) =>
    page({
      title: `Settings · ${project.name}`,
      signedIn: request.signedIn,
      section: 'projects',
      flash: { notice: options.flash?.notice },
      body: html`${projectHeader(project, 'settings')}
${projectForm({
  signedIn: request.signedIn!,
  action: `/projects/${project.id}/settings`,
  submitLabel: 'Save settings',
  values,
  project,
  error: options.error,
  extra: html`${contextRepositoriesSection({
    project,
    signedIn: request.signedIn!,
    repositories: await app.contextRepositories.list(project.id, { baseUrl: requestBaseUrl(request) }),
    docsWebhook: await app.contextRepositories.docsWebhook(project.id, { baseUrl: requestBaseUrl(request) }),
    form: options.contextForm,
    added: options.flash?.newContextRepository,
  })}${slackSection({
    project,
    signedIn: request.signedIn!,
    links: await app.slack.links.list(project.id),
    configured: app.slack.configured,
    form: options.slackForm,
  })}${webhooksSummary(project, await app.webhooks.listEndpoints(project.id))}${deleteProjectSection(project)}`,
})}`,
    });

  server.get<ProjectParams>('/projects/:projectId/settings', async (request, reply) => {
    const project = await projectOf(app, request.params.projectId);
    const flash = takeFlash(request, reply, app);
    return sendHtml(reply, await settingsPage(request, project, projectFormValues(project), { flash }));
  });

  registerContextRepositoryRoutes(server, app, {
    projectOf: (projectId) => projectOf(app, projectId),
    settingsPage: (request, project, contextForm) =>
      settingsPage(request, project, projectFormValues(project), { contextForm }),
  });

  registerSlackLinkRoutes(server, app, {
    projectOf: (projectId) => projectOf(app, projectId),
    settingsPage: (request, project, slackForm) =>
      settingsPage(request, project, projectFormValues(project), { slackForm }),
  });

  server.post<ProjectParams & { Body: ProjectForm }>(
    '/projects/:projectId/settings',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const form = request.body ?? {};
      let updated: ProjectView;
      try {
        updated = await app.projects.update(project.id, projectInput(form, 'update'));
      } catch (error) {
        if (error instanceof DocwrightError && error.status === 400) {
          return sendHtml(reply, await settingsPage(request, project, form, { error }), 400);
        }
        throw error;
      }
      const moved = updated.ref !== project.ref || updated.repository !== project.repository;
      const missingRef = moved
        ? await refWarning(updated, await app.projects.getSecrets(project.id), 'change the Base branch below')
        : undefined;
      setFlash(reply, app, request.signedIn!, {
        notice: missingRef ? `Settings saved. Warning: ${missingRef}.` : 'Settings saved.',
      });
      return reply.redirect(`/projects/${project.id}/settings`, 303);
    },
  );
}
