/**
 * The settings page's "Context repositories" section (docs/code-context.mdx): the code repositories the
 * project's agent reads, listed, added and removed; after adding, the webhook URL and secret that
 * docs/automations.mdx needs, shown once. Below them, the webhook of the project's own repository (`docs`, for
 * `docs-push` automations), whose secret is made (or replaced) here and shown once alike.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import type { ContextRepositoryView, DocsWebhookView } from '../projects/context-repositories.ts';
import type { ProjectView } from '../projects/projects.ts';
import { HOSTS } from '../projects/repository.ts';
import { DOCS_REPOSITORY } from '../repository-names.ts';
import { type Html, html } from './html.ts';
import { csrfField, fieldError, formErrors, invalid, sendHtml } from './layout.ts';
import { type SignedIn, setFlash } from './session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'contextRepositories' | 'sessions'>;

/** The add form's values, as submitted. */
export type ContextForm = Record<string, string | undefined>;

/** Each field's label, on the form and in the list of its errors. */
const LABELS: Record<string, string> = {
  name: 'Name',
  repository: 'Repository URL',
  host: 'Code host',
  apiUrl: 'API URL',
  ref: 'Branch',
  token: 'Access token',
};

/** The add form as the section re-shows it after a refusal. */
export interface ContextFormState {
  values: ContextForm;
  error?: DocwrightError | undefined;
}

/** Where code hosts reach this dashboard when `DOCWRIGHT_PUBLIC_URL` is unset: the address the browser used. */
export function requestBaseUrl(request: FastifyRequest): string | undefined {
  const { host } = request.headers;
  return host === undefined ? undefined : `${request.protocol}://${host}`;
}

/** The service's input from the submitted form: empty optional fields are left out. */
function contextInput(form: ContextForm): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const name of ['name', 'repository', 'host', 'apiUrl', 'ref', 'token']) {
    const value = (form[name] ?? '').trim();
    if (value !== '' || name === 'name' || name === 'repository') input[name] = value;
  }
  return input;
}

function addForm(project: ProjectView, signedIn: SignedIn, state: ContextFormState | undefined): Html {
  const values = state?.values ?? {};
  const error = state?.error;
  const fields = error?.fields;
  const input = (name: string, id: string, hint: string, attributes: Html | '' = '', type = 'text') =>
    html`<div class="field"><label for="${id}">${LABELS[name]}</label>
  <input id="${id}" name="${name}" type="${type}" value="${name === 'token' ? '' : (values[name] ?? '')}" ${attributes} ${invalid(fields, name, hint ? `${id}-hint` : undefined)}>
  ${hint && html`<p class="hint" id="${id}-hint">${hint}</p>`}${fieldError(fields, name)}</div>`;
  return html`<h3 id="add-context-heading" class="subsection">Add a context repository</h3>
  ${formErrors(error?.message, fields, LABELS)}
  <form method="post" action="/projects/${project.id}/context-repositories" class="stack" aria-labelledby="add-context-heading" novalidate>
    ${csrfField(signedIn)}
    <div class="row">
      ${input('name', 'context-name', 'Lowercase letters, digits, - and _; names it in jobs (_context/<name>/). docs is reserved.', html`required maxlength="63" spellcheck="false" autocomplete="off"`)}
      ${input('repository', 'context-repository', 'https://… on GitHub, GitLab, Gitea or Forgejo, or a path on this machine.', html`required maxlength="2000" spellcheck="false"`)}
    </div>
    <div class="row">
      <div class="field"><label for="context-host">${LABELS.host}</label>
        <select id="context-host" name="host" aria-describedby="context-host-hint" ${invalid(fields, 'host')}>
          <option value="">Detect from the URL</option>
          ${HOSTS.map((h) => html`<option value="${h}" ${values.host === h && html`selected`}>${h}</option>`)}
        </select>
        <p class="hint" id="context-host-hint">Needed for self-hosted servers.</p>${fieldError(fields, 'host')}</div>
      ${input('apiUrl', 'context-api-url', 'Self-hosted GitHub Enterprise, GitLab or Gitea only.', html`spellcheck="false"`, 'url')}
      ${input('ref', 'context-ref', 'The branch the agent reads. Default: the repository’s default branch.', html`spellcheck="false"`)}
    </div>
    ${input('token', 'context-token', 'A token that can read the repository. Stored encrypted and never shown again.', html`autocomplete="new-password" spellcheck="false"`, 'password')}
    <div><button type="submit">Add context repository</button></div>
  </form>`;
}

function repositoryTable(
  project: ProjectView,
  signedIn: SignedIn,
  repositories: ContextRepositoryView[],
): Html {
  if (repositories.length === 0) {
    return html`<p class="muted">No context repositories yet: the agent reads only the docs repository.</p>`;
  }
  const csrf = csrfField(signedIn);
  return html`<table class="hooks-table">
    <thead><tr><th scope="col">Name</th><th scope="col">Repository</th><th scope="col">Branch</th><th scope="col">Token</th><th scope="col">Webhook URL</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
    <tbody>${repositories.map(
      (r) => html`<tr>
      <td data-label="Name" class="mono">${r.name}</td>
      <td data-label="Repository"><div><span class="mono wrap">${r.repository}</span><div class="small muted">${r.host}${r.apiUrl && html` · ${r.apiUrl}`}</div></div></td>
      <td data-label="Branch" class="mono">${r.ref ?? html`<span class="muted">default</span>`}</td>
      <td data-label="Token">${r.hasToken ? 'Set' : html`<span class="muted">Not set</span>`}</td>
      <td data-label="Webhook URL" class="mono small wrap">${r.webhookUrl}</td>
      <td data-label=""><form method="post" action="/projects/${project.id}/context-repositories/${encodeURIComponent(r.name)}/remove">${csrf}
        <button type="submit" class="danger small-button" aria-label="Remove ${r.name}">Remove</button></form></td>
    </tr>`,
    )}</tbody>
  </table>`;
}

/** A webhook URL and its new secret, shown once (from the flash): a context repository's, or the docs repository's. */
function created(added: { name: string; webhookUrl: string; webhookSecret: string }): Html {
  const docs = added.name === DOCS_REPOSITORY;
  return html`<div class="new-key context-created" role="status" aria-labelledby="new-context-heading">
  <h3 id="new-context-heading">${docs ? 'New webhook secret for the docs repository' : `Context repository ${added.name} added`}</h3>
  <p>${docs ? 'Give the docs repository’s webhook this URL and secret (push events), so that docs-push automations hear of pushes. Any earlier secret no longer verifies.' : 'Add a webhook on its code host with this URL and secret, so that docwright hears of merged changes.'} Copy the secret now: it is shown only once.</p>
  <div class="field"><label for="new-context-webhook-url">Webhook URL</label>
    <div class="copyable"><input id="new-context-webhook-url" type="text" readonly value="${added.webhookUrl}" class="mono" spellcheck="false">
    <button type="button" data-copy="new-context-webhook-url" aria-label="Copy webhook URL">Copy</button></div></div>
  <div class="field"><label for="new-context-webhook-secret">Webhook secret</label>
    <div class="copyable"><input id="new-context-webhook-secret" type="text" readonly value="${added.webhookSecret}" class="mono" autocomplete="off" spellcheck="false">
    <button type="button" data-copy="new-context-webhook-secret" aria-label="Copy webhook secret">Copy</button></div></div>
</div>`;
}

/** The docs repository's own hook: its URL, and a button that makes (or replaces) its secret. */
function docsWebhookPanel(project: ProjectView, signedIn: SignedIn, hook: DocsWebhookView): Html {
  return html`<h3 id="docs-webhook-heading" class="subsection">Docs repository webhook</h3>
  <p>For <code>docs-push</code> automations: pushes to the docs repository’s branch reach docwright at <span class="mono wrap">${hook.webhookUrl}</span>. ${hook.hasSecret ? 'A secret is set.' : html`<span class="muted">No secret yet: until one is made, deliveries are refused and pushes are found by polling.</span>`}</p>
  <form method="post" action="/projects/${project.id}/docs-webhook-secret" aria-labelledby="docs-webhook-heading">${csrfField(signedIn)}
    <button type="submit">${hook.hasSecret ? 'Replace webhook secret' : 'Create webhook secret'}</button></form>`;
}

/** The settings page's section. */
export function contextRepositoriesSection(options: {
  project: ProjectView;
  signedIn: SignedIn;
  repositories: ContextRepositoryView[];
  docsWebhook: DocsWebhookView;
  form?: ContextFormState | undefined;
  added?: { name: string; webhookUrl: string; webhookSecret: string } | undefined;
}): Html {
  const { project, signedIn } = options;
  return html`<section class="panel settings-extra" id="context-repositories" aria-labelledby="context-heading">
  <h2 id="context-heading">Context repositories</h2>
  <p>Code the agent reads, never writes, under <code>_context/&lt;name&gt;/</code>: the repositories whose changes the docs follow. Up to 10.</p>
  ${options.added && created(options.added)}
  ${repositoryTable(project, signedIn, options.repositories)}
  ${addForm(project, signedIn, options.form)}
  ${docsWebhookPanel(project, signedIn, options.docsWebhook)}
</section>`;
}

/**
 * `POST /projects/{projectId}/context-repositories` (add), `…/{name}/remove` and
 * `POST /projects/{projectId}/docs-webhook-secret` (a new secret for the docs hook). A refused add
 * shows the settings page again, through `settingsPage`, with the form's values and errors.
 */
export function registerContextRepositoryRoutes(
  server: FastifyInstance,
  app: AppUses,
  pages: {
    /** The project of a dashboard path, or a 404 page (projects.ts). */
    projectOf: (projectId: string) => Promise<ProjectView>;
    settingsPage: (request: FastifyRequest, project: ProjectView, form: ContextFormState) => Promise<Html>;
  },
): void {
  const { projectOf, settingsPage } = pages;
  server.post<{ Params: { projectId: string }; Body: ContextForm }>(
    '/projects/:projectId/context-repositories',
    async (request, reply) => {
      const project = await projectOf(request.params.projectId);
      const form = request.body ?? {};
      let added: Awaited<ReturnType<App['contextRepositories']['add']>>;
      try {
        added = await app.contextRepositories.add(project.id, contextInput(form), {
          baseUrl: requestBaseUrl(request),
        });
      } catch (error) {
        if (error instanceof DocwrightError && (error.status === 400 || error.status === 409)) {
          return sendHtml(reply, await settingsPage(request, project, { values: form, error }), error.status);
        }
        throw error;
      }
      // Shown once on the page the browser is sent to (a reload no longer has it).
      setFlash(reply, app, request.signedIn!, {
        newContextRepository: {
          name: added.name,
          webhookUrl: added.webhookUrl,
          webhookSecret: added.webhookSecret,
        },
      });
      return reply.redirect(`/projects/${project.id}/settings#context-repositories`, 303);
    },
  );

  server.post<{ Params: { projectId: string } }>(
    '/projects/:projectId/docs-webhook-secret',
    async (request, reply) => {
      const project = await projectOf(request.params.projectId);
      const made = await app.contextRepositories.newDocsWebhookSecret(project.id, {
        baseUrl: requestBaseUrl(request),
      });
      setFlash(reply, app, request.signedIn!, {
        newContextRepository: {
          name: made.name,
          webhookUrl: made.webhookUrl,
          webhookSecret: made.webhookSecret,
        },
      });
      return reply.redirect(`/projects/${project.id}/settings#context-repositories`, 303);
    },
  );

  server.post<{ Params: { projectId: string; name: string } }>(
    '/projects/:projectId/context-repositories/:name/remove',
    async (request, reply) => {
      const project = await projectOf(request.params.projectId);
      const removed = await app.contextRepositories.remove(project.id, request.params.name);
      setFlash(reply, app, request.signedIn!, {
        notice: `Context repository ${removed.name} removed: jobs no longer read it. Delete its webhook on the code host too.`,
      });
      return reply.redirect(`/projects/${project.id}/settings#context-repositories`, 303);
    },
  );
}
