import type { FastifyInstance } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { type ApiKeyView, DEFAULT_KEY_EXPIRY_DAYS } from '../keys/keys.ts';
import { html } from './html.ts';
import { csrfField, page, projectHeader, sendHtml, serverBaseUrl, time } from './layout.ts';
import { projectOf } from './projects.ts';
import { setFlash, takeFlash } from './session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<
  App,
  'config' | 'contextRepositories' | 'jobHistory' | 'keys' | 'now' | 'projects' | 'sessions' | 'webhooks'
>;

type ProjectParams = { Params: { projectId: string } };
type KeyParams = { Params: { projectId: string; keyId: string } };

/** docs/dashboard.mdx: 7, 30, 60 or 90 days, or none; the key service's default is chosen at first. */
const EXPIRY_DAYS = ['7', '30', '60', '90'] as const;
const DEFAULT_EXPIRY = String(DEFAULT_KEY_EXPIRY_DAYS);

function keyState(key: ApiKeyView, now: Date): string | undefined {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt <= now.toISOString()) return 'expired';
  return undefined;
}

/** `/projects/{projectId}/keys`: the project ID, creating, listing and revoking API keys. */
export function registerKeyPages(server: FastifyInstance, app: AppUses): void {
  server.get<ProjectParams>('/projects/:projectId/keys', async (request, reply) => {
    const project = await projectOf(app, request.params.projectId);
    const signedIn = request.signedIn!;
    const flash = takeFlash(request, reply, app);
    const now = app.now();
    const keys = (await app.keys.list(project.id)).filter((k) => !k.revokedAt);
    const base = `/projects/${project.id}/keys`;
    const newKey = flash.newKey;
    const apiBase = serverBaseUrl(app.config, request);
    const curlExample = `curl -X POST ${apiBase}/v2/agent/${project.id}/job \\
  -H "Authorization: Bearer $DOCWRIGHT_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"prompt": "Fix the typos on the home page"}'`;
    const body = html`${projectHeader(project, 'keys')}
<section class="panel" aria-labelledby="project-id-heading">
  <h2 id="project-id-heading">Use the API</h2>
  <p>Send <code>Authorization: Bearer &lt;API key&gt;</code> to <code>/v2/agent/&lt;project ID&gt;/job</code>. Keys work for this project only.</p>
  <div class="field"><label for="project-id">Project ID</label>
    <div class="copyable"><input id="project-id" type="text" readonly value="${project.id}" class="mono">
    <button type="button" data-copy="project-id">Copy</button></div></div>
  <div class="field"><label for="base-url">Base URL</label>
    <div class="copyable"><input id="base-url" type="text" readonly value="${apiBase}" class="mono">
    <button type="button" data-copy="base-url" aria-label="Copy base URL">Copy</button></div></div>
  <p class="small">A first job from a shell (with the key in <code>DOCWRIGHT_API_KEY</code>):</p>
  <pre class="command small" aria-label="curl example">${curlExample}</pre>
</section>
${
  newKey &&
  html`<section class="panel new-key" aria-labelledby="new-key-heading">
  <h2 id="new-key-heading">Your new key</h2>
  <p>Copy it now: it is shown only once and cannot be recovered. Lost keys are revoked and replaced.</p>
  <div class="field"><label for="new-key">New API key</label>
    <div class="copyable"><input id="new-key" type="text" readonly value="${newKey.key}" class="mono" autocomplete="off" spellcheck="false">
    <button type="button" data-copy="new-key" aria-label="Copy key">Copy</button></div></div>
</section>`
}
<section class="panel" aria-labelledby="create-heading">
  <h2 id="create-heading">Create a key</h2>
  <form method="post" action="${base}" class="row">
    ${csrfField(signedIn)}
    <div class="field"><label for="key-name">Name <span class="muted">(optional)</span></label>
      <input id="key-name" name="name" type="text" maxlength="100" placeholder="e.g. CI on main"></div>
    <div class="field"><label for="key-expiry">Expires</label>
      <select id="key-expiry" name="expiresInDays">
        ${EXPIRY_DAYS.map((d) => html`<option value="${d}" ${d === DEFAULT_EXPIRY && html`selected`}>In ${d} days</option>`)}
        <option value="none">Never</option>
      </select></div>
    <div><button type="submit" class="primary">Create key</button></div>
  </form>
</section>
<section class="panel" aria-labelledby="keys-heading">
  <h2 id="keys-heading">Keys</h2>
  ${
    keys.length === 0
      ? html`<p class="empty">No keys yet. Create one above to call the API, the CLI’s job commands or the MCP server.</p>`
      : html`<table>
    <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
    <tbody>${keys.map((key) => {
      const state = keyState(key, now);
      return html`<tr>
      <td data-label="Name">${key.name ?? html`<span class="muted">Unnamed</span>`}</td>
      <td data-label="Key" class="mono">${key.display}${state && html` <span class="status status-failed">${state}</span>`}</td>
      <td data-label="Created">${time(key.createdAt, now)}</td>
      <td data-label="Last used">${time(key.lastUsedAt, now)}</td>
      <td data-label="Expires">${key.expiresAt ? time(key.expiresAt, now) : html`<span class="muted">never</span>`}</td>
      <td data-label=""><form method="post" action="${base}/${key.id}/revoke">${csrfField(signedIn)}
        <button type="submit" class="danger small-button">Revoke</button></form></td>
    </tr>`;
    })}</tbody>
  </table>`
  }
</section>`;
    return sendHtml(
      reply,
      page({ title: `API keys · ${project.name}`, signedIn, section: 'projects', flash, body }),
    );
  });

  server.post<ProjectParams & { Body: Record<string, string | undefined> }>(
    '/projects/:projectId/keys',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const name = (request.body?.name ?? '').trim();
      const expiry = request.body?.expiresInDays ?? 'none';
      if (expiry !== 'none' && !(EXPIRY_DAYS as readonly string[]).includes(expiry)) {
        throw new DocwrightError('invalid-request', 'Choose an expiry of 7, 30, 60 or 90 days, or never.');
      }
      const expiresAt =
        expiry === 'none' ? null : new Date(app.now().getTime() + Number(expiry) * 24 * 60 * 60 * 1000);
      const created = await app.keys.create(project.id, { name: name.slice(0, 100) || undefined, expiresAt });
      // Shown once on the page the browser is sent to (a reload no longer has it).
      setFlash(reply, app, request.signedIn!, { newKey: { id: created.id, key: created.key } });
      return reply.redirect(`/projects/${project.id}/keys`, 303);
    },
  );

  server.post<KeyParams>('/projects/:projectId/keys/:keyId/revoke', async (request, reply) => {
    const project = await projectOf(app, request.params.projectId);
    const key = (await app.keys.list(project.id)).find((k) => k.id === request.params.keyId);
    if (!key) throw new DocwrightError('key-not-found', 'That key does not exist in this project.');
    await app.keys.revoke(key.id);
    setFlash(reply, app, request.signedIn!, {
      notice: `Key ${key.name ? `${key.name} (${key.display})` : key.display} revoked: requests with it now get 401.`,
    });
    return reply.redirect(`/projects/${project.id}/keys`, 303);
  });
}
