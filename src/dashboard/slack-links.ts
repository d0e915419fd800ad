/**
 * The settings page's "Slack" section (docs/slack.mdx): the Slack channels linked to the project
 * (mentions of the app there start jobs on it), listed, linked and unlinked. Linking a channel
 * that another project has moves it here.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import type { SlackLink } from '../conversations/slack/links.ts';
import { DocwrightError } from '../errors.ts';
import type { ProjectView } from '../projects/projects.ts';
import { type Html, html } from './html.ts';
import { csrfField, fieldError, formErrors, invalid, sendHtml } from './layout.ts';
import { type SignedIn, setFlash } from './session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'sessions' | 'slack'>;

/** The link form as the section re-shows it after a refusal. */
export interface SlackFormState {
  channel: string;
  error?: DocwrightError | undefined;
}

function linkTable(project: ProjectView, signedIn: SignedIn, links: SlackLink[]): Html {
  if (links.length === 0) {
    return html`<p class="muted">No Slack channel is linked to this project yet.</p>`;
  }
  const csrf = csrfField(signedIn);
  return html`<table class="hooks-table">
    <caption class="skip">Slack channels linked to this project</caption>
    <thead><tr><th scope="col">Channel</th><th scope="col">Linked by</th><th scope="col">Since</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
    <tbody>${links.map(
      (l) => html`<tr>
      <td data-label="Channel" class="mono">${l.channelId}</td>
      <td data-label="Linked by">${l.linkedBy}</td>
      <td data-label="Since"><time datetime="${l.createdAt}">${l.createdAt.slice(0, 16).replace('T', ' ')}</time></td>
      <td data-label=""><form method="post" action="/projects/${project.id}/slack-links/${encodeURIComponent(l.channelId)}/unlink">${csrf}
        <button type="submit" class="danger small-button" aria-label="Unlink channel ${l.channelId}">Unlink</button></form></td>
    </tr>`,
    )}</tbody>
  </table>`;
}

function linkForm(project: ProjectView, signedIn: SignedIn, state: SlackFormState | undefined): Html {
  const fields = state?.error?.fields;
  return html`<h3 id="slack-link-heading" class="subsection">Link a channel</h3>
  ${formErrors(state?.error?.message, fields, { channel: 'Slack channel ID' })}
  <form method="post" action="/projects/${project.id}/slack-links" class="stack" aria-labelledby="slack-link-heading" novalidate>
    ${csrfField(signedIn)}
    <div class="field"><label for="slack-channel">Slack channel ID</label>
      <input id="slack-channel" name="channel" type="text" value="${state?.channel ?? ''}" required maxlength="40" spellcheck="false" autocomplete="off" ${invalid(fields, 'channel', 'slack-channel-hint')}>
      <p class="hint" id="slack-channel-hint">Such as C0123ABCD: in Slack, the channel’s details, at the bottom of About. Invite the app to the channel too (<code>/invite @docwright</code>).</p>${fieldError(fields, 'channel')}</div>
    <div><button type="submit">Link channel</button></div>
  </form>`;
}

/** The settings page's section. */
export function slackSection(options: {
  project: ProjectView;
  signedIn: SignedIn;
  links: SlackLink[];
  configured: boolean;
  form?: SlackFormState | undefined;
}): Html {
  const { project, signedIn } = options;
  return html`<section class="panel settings-extra" id="slack" aria-labelledby="slack-heading">
  <h2 id="slack-heading">Slack</h2>
  <p>In a linked channel, mentioning the app starts a job on this project and it answers in the thread. A Slack admin can also link a channel from Slack: <code>/docwright link ${project.id}</code>.</p>
  ${!options.configured && html`<p class="muted" role="note">This server has no Slack signing secret (<code>DOCWRIGHT_SLACK_SIGNING_SECRET</code>): links are kept, but Slack cannot reach docwright until it is set.</p>`}
  ${linkTable(project, signedIn, options.links)}
  ${linkForm(project, signedIn, options.form)}
</section>`;
}

/**
 * `POST /projects/{projectId}/slack-links` (link) and `…/slack-links/{channel}/unlink`. A refused
 * link shows the settings page again, through `settingsPage`, with the value and the error.
 */
export function registerSlackLinkRoutes(
  server: FastifyInstance,
  app: AppUses,
  pages: {
    projectOf: (projectId: string) => Promise<ProjectView>;
    settingsPage: (request: FastifyRequest, project: ProjectView, form: SlackFormState) => Promise<Html>;
  },
): void {
  const { projectOf, settingsPage } = pages;
  server.post<{ Params: { projectId: string }; Body: { channel?: string } }>(
    '/projects/:projectId/slack-links',
    async (request, reply) => {
      const project = await projectOf(request.params.projectId);
      const channel = String(request.body?.channel ?? '');
      let linked: Awaited<ReturnType<App['slack']['links']['link']>>;
      try {
        linked = await app.slack.links.link(
          project.id,
          channel,
          `dashboard:${request.signedIn!.operator.email}`,
        );
      } catch (error) {
        if (error instanceof DocwrightError && error.status === 400) {
          return sendHtml(reply, await settingsPage(request, project, { channel, error }), 400);
        }
        throw error;
      }
      const moved = linked.previousProjectId
        ? ` It was linked to project ${linked.previousProjectId} before.`
        : '';
      setFlash(reply, app, request.signedIn!, {
        notice: `Slack channel ${linked.channelId} linked: mentions of the app there start jobs on this project.${moved}`,
      });
      return reply.redirect(`/projects/${project.id}/settings#slack`, 303);
    },
  );

  server.post<{ Params: { projectId: string; channel: string } }>(
    '/projects/:projectId/slack-links/:channel/unlink',
    async (request, reply) => {
      const project = await projectOf(request.params.projectId);
      const removed = await app.slack.links.unlink(request.params.channel, { projectId: project.id });
      setFlash(reply, app, request.signedIn!, {
        notice: `Slack channel ${removed.channelId} unlinked: mentions there start nothing now.`,
      });
      return reply.redirect(`/projects/${project.id}/settings#slack`, 303);
    },
  );
}
