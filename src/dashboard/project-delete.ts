/**
 * Deleting a project from the dashboard: the settings page links to `/projects/{id}/delete`,
 * which says what the deletion removes and asks for the project's name before it is done (a
 * plain form: it works without JavaScript).
 */
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import type { ProjectDeletionImpact } from '../projects/project-deletion.ts';
import type { ProjectView } from '../projects/projects.ts';
import { type Html, html } from './html.ts';
import { csrfField, fieldError, formatNumber, formErrors, invalid, page, sendHtml } from './layout.ts';
import { projectOf } from './projects.ts';
import { type SignedIn, setFlash } from './session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<
  App,
  'config' | 'contextRepositories' | 'jobHistory' | 'projects' | 'sessions' | 'webhooks'
>;

type ProjectParams = { Params: { projectId: string } };

const counted = (n: number, noun: string) => `${formatNumber(n)} ${noun}${n === 1 ? '' : 's'}`;

function confirmationPage(
  signedIn: SignedIn,
  project: ProjectView,
  impact: ProjectDeletionImpact,
  error?: DocwrightError,
): Html {
  const fields = error?.fields;
  return page({
    title: `Delete ${project.name}`,
    signedIn,
    section: 'projects',
    body: html`<div class="crumbs"><a href="/">Projects</a> / <a href="/projects/${project.id}/settings">${project.name}</a> / Delete</div>
<div class="page-head"><div><h1>Delete ${project.name}?</h1><p class="mono">${project.repository}</p></div></div>
<section class="panel danger-zone" aria-labelledby="consequences-heading">
  <h2 id="consequences-heading">This cannot be undone</h2>
  <ul>
    <li>Jobs, with their transcripts and diffs: ${formatNumber(impact.jobs)}${impact.activeJobs > 0 ? html` (<strong>${formatNumber(impact.activeJobs)} running or waiting, cancelled</strong>)` : ''}</li>
    <li>API keys, which stop working at once: ${formatNumber(impact.keys)}</li>
    <li>Webhook endpoints, with their deliveries: ${formatNumber(impact.webhookEndpoints)}</li>
    <li>Branches and pull requests already pushed stay on the code host.</li>
  </ul>
  ${formErrors(error?.message)}
  <form method="post" action="/projects/${project.id}/delete" class="stack">
    ${csrfField(signedIn)}
    <div class="field"><label for="confirm-name">Type the project name to confirm</label>
      <input id="confirm-name" name="confirm" type="text" autocomplete="off" required ${invalid(fields, 'confirm', 'confirm-hint')}>
      <p class="hint" id="confirm-hint">The name is <strong>${project.name}</strong>.</p>
      ${fieldError(fields, 'confirm')}</div>
    <div class="actions"><button type="submit" class="danger">Delete project</button>
      <a class="button" href="/projects/${project.id}/settings">Cancel</a></div>
  </form>
</section>`,
  });
}

export function registerProjectDeletePages(server: FastifyInstance, app: AppUses): void {
  server.get<ProjectParams>('/projects/:projectId/delete', async (request, reply) => {
    const project = await projectOf(app, request.params.projectId);
    const impact = await app.projects.deletionImpact(project.id);
    return sendHtml(reply, confirmationPage(request.signedIn!, project, impact));
  });

  server.post<ProjectParams & { Body: { confirm?: string } }>(
    '/projects/:projectId/delete',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      if ((request.body?.confirm ?? '').trim() !== project.name) {
        const error = new DocwrightError(
          'invalid-request',
          `The name did not match, so nothing was deleted. Type ${project.name} to delete the project.`,
          { fields: [{ field: 'confirm', message: `must be ${project.name}` }] },
        );
        const impact = await app.projects.deletionImpact(project.id);
        return sendHtml(reply, confirmationPage(request.signedIn!, project, impact, error), 400);
      }
      const { deleted } = await app.projects.delete(project.id);
      const cancelled =
        deleted.activeJobs > 0 ? `, ${counted(deleted.activeJobs, 'running job')} cancelled` : '';
      setFlash(reply, app, request.signedIn!, {
        notice: `Project ${project.name} deleted with ${counted(deleted.jobs, 'job')}${cancelled}, ${counted(deleted.keys, 'API key')} and ${counted(deleted.webhookEndpoints, 'webhook endpoint')}.`,
      });
      return reply.redirect('/', 303);
    },
  );
}
