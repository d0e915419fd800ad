import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError, type FieldError } from '../errors.ts';
import { isWebhookDeliveryId, isWebhookEndpointId } from '../ids.ts';
import {
  DEFAULT_WEBHOOK_EVENTS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../jobs/webhook-events.ts';
import type { ProjectView } from '../projects/projects.ts';
import type {
  WebhookDeliveryStatus,
  WebhookEndpointInput,
  WebhookEndpointView,
} from '../webhooks/webhooks.ts';
import { type Html, html } from './html.ts';
import {
  ariaCurrent,
  csrfField,
  fieldError,
  formErrors,
  invalid,
  page,
  projectHeader,
  sendHtml,
  time,
} from './layout.ts';
import { projectOf } from './projects.ts';
import { setFlash, takeFlash } from './session.ts';
import { deliveryPage, deliveryRows } from './webhook-deliveries.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<
  App,
  'config' | 'contextRepositories' | 'jobHistory' | 'now' | 'projects' | 'sessions' | 'webhooks'
>;

type ProjectParams = { Params: { projectId: string } };
type EndpointParams = { Params: { projectId: string; endpointId: string } };
type DeliveryParams = { Params: { projectId: string; deliveryId: string } };
/** Form bodies: a field sent more than once (the event checkboxes) arrives as an array. */
type Form = Record<string, string | string[] | undefined>;

export const DELIVERIES_PAGE_SIZE = 25;
/** Deliveries due within this long keep the list refreshing (a retry hours away does not). */
const LIVE_WITHIN_MS = 60_000;

const DELIVERY_STATUSES: WebhookDeliveryStatus[] = ['pending', 'sending', 'succeeded', 'failed'];

/** What each event type reports, beside its checkbox. */
const EVENT_HINTS: Record<WebhookEventType, string> = {
  'job.created': 'A job was created (API, dashboard, CLI or MCP).',
  'job.completed': 'A run finished and pushed its changes (again after each follow-up).',
  'job.failed': 'A run failed; the job’s error says why.',
  'job.archived': 'A job was archived (a running one is cancelled).',
};

const first = (value: string | string[] | undefined): string =>
  (Array.isArray(value) ? value[0] : value) ?? '';
const all = (value: string | string[] | undefined): string[] => [value ?? []].flat();

/** The service's field names as the form's (`events.0` → `events`). */
const formFields = (fields: FieldError[] | undefined) =>
  fields?.map((f) => ({ ...f, field: f.field.replace(/^events\..*$/, 'events') }));

/** The endpoint of a dashboard path, only if it belongs to the path's project. */
async function endpointOf(
  app: AppUses,
  project: ProjectView,
  endpointId: string,
): Promise<WebhookEndpointView> {
  const endpoint = await app.webhooks.getEndpoint(endpointId);
  if (endpoint.projectId !== project.id)
    throw new DocwrightError('webhook-not-found', 'That webhook endpoint does not exist in this project.');
  return endpoint;
}

async function deliveryOf(app: AppUses, project: ProjectView, deliveryId: string) {
  const delivery = await app.webhooks.getDelivery(deliveryId);
  const endpoint = await app.webhooks.getEndpoint(delivery.endpointId);
  if (endpoint.projectId !== project.id)
    throw new DocwrightError('delivery-not-found', 'That delivery does not exist in this project.');
  return { delivery, endpoint };
}

/** Where a form sends the browser back to: the page it was on, if that is one of this project's webhook pages. */
function backTo(project: ProjectView, next: string): string {
  const base = `/projects/${project.id}/webhooks`;
  return (next === base || next.startsWith(`${base}?`) || next.startsWith(`${base}/`)) &&
    /^[\x21-\x7e]+$/.test(next)
    ? next
    : base;
}

const endpointState = (endpoint: WebhookEndpointView, now: Date): Html =>
  endpoint.enabled
    ? html`<span class="status status-enabled">enabled</span>`
    : html`<span class="status status-disabled">disabled</span>
      <span class="small muted">${endpoint.disabledReason ?? ''}${endpoint.disabledAt && html`, ${time(endpoint.disabledAt, now)}`}</span>`;

function endpointForm(
  project: ProjectView,
  request: FastifyRequest,
  values: Form,
  error?: DocwrightError,
): Html {
  const fields = formFields(error?.fields);
  // The docs/webhooks.mdx default until the person chose otherwise.
  const checked = error ? all(values.events) : DEFAULT_WEBHOOK_EVENTS;
  return html`<section class="panel" aria-labelledby="add-endpoint-heading">
  <h2 id="add-endpoint-heading">Add an endpoint</h2>
  ${formErrors(error?.message, fields, { url: 'Endpoint URL', description: 'Description', events: 'Events' })}
  <form method="post" action="/projects/${project.id}/webhooks" class="stack" novalidate>
    ${csrfField(request.signedIn!)}
    <div class="field"><label for="endpoint-url">Endpoint URL</label>
        <input id="endpoint-url" name="url" type="url" required maxlength="2000" spellcheck="false" placeholder="https://example.com/hooks/docwright" value="${first(values.url)}" ${invalid(fields, 'url', 'endpoint-url-hint')}>
        <p class="hint" id="endpoint-url-hint">An http(s) URL on a public address; redirects are not followed.</p>${fieldError(fields, 'url')}</div>
      <div class="field"><label for="endpoint-description">Description <span class="muted">(optional)</span></label>
        <input id="endpoint-description" name="description" type="text" maxlength="200" placeholder="e.g. Slack relay" value="${first(values.description)}" ${invalid(fields, 'description')}>${fieldError(fields, 'description')}</div>
    <fieldset aria-describedby="events-hint${fields?.some((f) => f.field === 'events') ? ' events-error' : ''}"><legend>Events</legend>
      <p class="hint" id="events-hint">Which job changes are sent to this endpoint.</p>
      ${WEBHOOK_EVENT_TYPES.map(
        (type) =>
          html`<label class="check"><input type="checkbox" name="events" value="${type}" ${checked.includes(type) && html`checked`}> <span><code>${type}</code> <span class="hint">— ${EVENT_HINTS[type]}</span></span></label>`,
      )}
      ${fieldError(fields, 'events')}
    </fieldset>
    <div><button type="submit" class="primary">Add endpoint</button></div>
  </form>
</section>`;
}

function endpointsTable(
  project: ProjectView,
  request: FastifyRequest,
  endpoints: WebhookEndpointView[],
  now: Date,
): Html {
  const base = `/projects/${project.id}/webhooks`;
  const csrf = csrfField(request.signedIn!);
  return html`<section class="panel" aria-labelledby="endpoints-heading">
  <h2 id="endpoints-heading">Endpoints</h2>
  ${
    endpoints.length === 0
      ? html`<p class="empty">No endpoints yet. Add one above to be told when jobs end instead of polling.</p>`
      : html`<table class="hooks-table">
    <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Created</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
    <tbody>${endpoints.map(
      (endpoint) => html`<tr>
      <td data-label="URL"><div><span class="mono">${endpoint.url}</span>${endpoint.description && html`<div class="small muted">${endpoint.description}</div>`}</div></td>
      <td data-label="Events" class="mono small">${endpoint.events.join(', ')}</td>
      <td data-label="State"><div>${endpointState(endpoint, now)}</div></td>
      <td data-label="Created">${time(endpoint.createdAt, now)}</td>
      <td data-label=""><div class="actions">
        <a class="button small-button" href="${base}?endpoint=${endpoint.id}#deliveries">Deliveries</a>
        <form method="post" action="${base}/${endpoint.id}/${endpoint.enabled ? 'disable' : 'enable'}">${csrf}
          <button type="submit" class="small-button">${endpoint.enabled ? 'Disable' : 'Enable'}</button></form>
        <form method="post" action="${base}/${endpoint.id}/delete">${csrf}
          <button type="submit" class="danger small-button">Delete</button></form>
      </div></td>
    </tr>`,
    )}</tbody>
  </table>`
  }
</section>`;
}

/** The query of the deliveries list, with anything malformed dropped rather than refused. */
function deliveriesQuery(query: Form) {
  const endpointId = first(query.endpoint);
  const status = first(query.status) as WebhookDeliveryStatus;
  const cursor = first(query.cursor);
  return {
    endpointId: isWebhookEndpointId(endpointId) ? endpointId : undefined,
    status: DELIVERY_STATUSES.includes(status) ? status : undefined,
    cursor: isWebhookDeliveryId(cursor) ? cursor : undefined,
  };
}

async function webhooksPage(
  app: AppUses,
  request: FastifyRequest,
  reply: FastifyReply,
  project: ProjectView,
  query: Form,
  form: { values: Form; error?: DocwrightError } = { values: {} },
) {
  const signedIn = request.signedIn!;
  const flash = takeFlash(request, reply, app);
  const now = app.now();
  const filter = deliveriesQuery(query);
  const endpoints = await app.webhooks.listEndpoints(project.id);
  const list = await app.webhooks.listDeliveries(project.id, { ...filter, limit: DELIVERIES_PAGE_SIZE });
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  const base = `/projects/${project.id}/webhooks`;
  const href = (
    params: { endpoint?: string | undefined; status?: string | undefined; cursor?: string | undefined },
    fragment = '#deliveries',
  ) => {
    const search = new URLSearchParams(
      Object.entries(params).filter((entry): entry is [string, string] => Boolean(entry[1])),
    ).toString();
    return `${base}${search ? `?${search}` : ''}${fragment}`;
  };
  const here = { endpoint: filter.endpointId, status: filter.status, cursor: filter.cursor };
  // While a delivery is on its way, the list reloads itself (where JavaScript runs) until none is.
  const soon = now.getTime() + LIVE_WITHIN_MS;
  const inFlight = list.deliveries.some(
    (d) => d.status === 'sending' || (d.status === 'pending' && Date.parse(d.nextAttemptAt ?? '') <= soon),
  );
  const live = inFlight
    ? html`hx-get="${href(here, '')}" hx-trigger="every 2s" hx-select="#delivery-list" hx-swap="outerHTML"`
    : '';
  const statusFilter = (value: WebhookDeliveryStatus | undefined, label: string) =>
    html`<a href="${href({ endpoint: filter.endpointId, status: value })}" ${ariaCurrent(filter.status === value)}>${label}</a>`;
  const onlyTo = filter.endpointId && byId.get(filter.endpointId);
  const newWebhook = flash.newWebhook;
  const body = html`${projectHeader(project, 'webhooks')}
<p class="muted">Each event is a signed POST (<a href="https://www.standardwebhooks.com/" rel="noreferrer">Standard Webhooks</a>) with the job as it is at that moment; a delivery that fails is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about 28 hours in all).</p>
${
  newWebhook &&
  html`<section class="panel new-key" aria-labelledby="new-secret-heading">
  <h2 id="new-secret-heading">Your new endpoint’s secret</h2>
  <p>Copy it now into the receiver at <span class="mono wrap">${newWebhook.url}</span>: it is shown only once. Verify each delivery’s <code>webhook-signature</code> with it (any Standard Webhooks library does).</p>
  <div class="field"><label for="new-secret">Signing secret</label>
    <div class="copyable"><input id="new-secret" type="text" readonly value="${newWebhook.secret}" class="mono" autocomplete="off" spellcheck="false">
    <button type="button" data-copy="new-secret" aria-label="Copy secret">Copy</button></div></div>
</section>`
}
${endpointForm(project, request, form.values, form.error)}
${endpointsTable(project, request, endpoints, now)}
<section id="deliveries" aria-labelledby="deliveries-heading">
  <h2 id="deliveries-heading">Deliveries</h2>
  ${onlyTo && html`<p>To <span class="mono wrap">${onlyTo.url}</span> only. <a href="${href({ status: filter.status })}">Show all endpoints</a></p>`}
  <nav class="filters" aria-label="Filter deliveries by status">${statusFilter(undefined, 'All')}${DELIVERY_STATUSES.map((s) => statusFilter(s, s[0]!.toUpperCase() + s.slice(1)))}</nav>
  <div id="delivery-list" ${live}>
  ${
    list.deliveries.length === 0
      ? html`<div class="panel empty"><h3>No deliveries ${filter.status || filter.cursor || filter.endpointId ? 'here' : 'yet'}</h3>
      <p>${endpoints.length === 0 ? 'Add an endpoint, then each job event it subscribes to is delivered and listed here.' : 'Each job event an endpoint subscribes to is delivered and listed here, newest first.'}</p></div>`
      : html`<div class="panel">${deliveryRows({ project, signedIn, deliveries: list.deliveries, endpoints: byId, now, back: href(here) })}</div>`
  }
  <nav class="pager" aria-label="Pages of deliveries">
    ${filter.cursor ? html`<a href="${href({ endpoint: filter.endpointId, status: filter.status })}">← Newest</a>` : html`<span></span>`}
    ${list.nextCursor && html`<a href="${href({ ...here, cursor: list.nextCursor })}">Older →</a>`}
  </nav>
  </div>
</section>`;
  return sendHtml(
    reply,
    page({ title: `Webhooks · ${project.name}`, signedIn, section: 'projects', flash, body }),
    form.error?.status ?? 200,
  );
}

/** `/projects/{projectId}/webhooks`: endpoints (add, enable, disable, delete) and deliveries (re-send). */
export function registerWebhookPages(server: FastifyInstance, app: AppUses): void {
  server.get<ProjectParams & { Querystring: Form }>(
    '/projects/:projectId/webhooks',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      return webhooksPage(app, request, reply, project, request.query);
    },
  );

  server.post<ProjectParams & { Body: Form }>('/projects/:projectId/webhooks', async (request, reply) => {
    const project = await projectOf(app, request.params.projectId);
    const form = request.body ?? {};
    const input: WebhookEndpointInput = {
      url: first(form.url).trim(),
      // No box ticked is a choice the service refuses, not a wish for the default.
      events: all(form.events) as WebhookEventType[],
      description: first(form.description).trim() || undefined,
    };
    let created: Awaited<ReturnType<App['webhooks']['createEndpoint']>>;
    try {
      created = await app.webhooks.createEndpoint(project.id, input);
    } catch (error) {
      if (error instanceof DocwrightError && error.status === 400) {
        return webhooksPage(app, request, reply, project, {}, { values: form, error });
      }
      throw error;
    }
    // Shown once on the page the browser is sent to (a reload no longer has it).
    setFlash(reply, app, request.signedIn!, {
      newWebhook: { id: created.id, url: created.url, secret: created.secret },
    });
    return reply.redirect(`/projects/${project.id}/webhooks`, 303);
  });

  const endpointAction = (
    action: 'enable' | 'disable' | 'delete',
    run: (endpoint: WebhookEndpointView, request: FastifyRequest) => Promise<unknown>,
    notice: (endpoint: WebhookEndpointView) => string,
  ) =>
    server.post<EndpointParams>(
      `/projects/:projectId/webhooks/:endpointId/${action}`,
      async (request, reply) => {
        const project = await projectOf(app, request.params.projectId);
        const endpoint = await endpointOf(app, project, request.params.endpointId);
        await run(endpoint, request);
        setFlash(reply, app, request.signedIn!, { notice: notice(endpoint) });
        return reply.redirect(`/projects/${project.id}/webhooks`, 303);
      },
    );

  endpointAction(
    'disable',
    (endpoint, request) =>
      app.webhooks.disableEndpoint(endpoint.id, `disabled by ${request.signedIn!.operator.email}`),
    (endpoint) =>
      `Nothing is sent to ${endpoint.url} until it is enabled again; deliveries that were waiting are marked failed (re-send them after enabling it).`,
  );
  endpointAction(
    'enable',
    (endpoint) => app.webhooks.enableEndpoint(endpoint.id),
    (endpoint) => `${endpoint.url} gets new events again. Re-send below what it missed.`,
  );
  endpointAction(
    'delete',
    (endpoint) => app.webhooks.deleteEndpoint(endpoint.id),
    (endpoint) => `Endpoint ${endpoint.url} deleted, with its delivery history.`,
  );

  server.get<DeliveryParams>(
    '/projects/:projectId/webhooks/deliveries/:deliveryId',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const { delivery, endpoint } = await deliveryOf(app, project, request.params.deliveryId);
      const flash = takeFlash(request, reply, app);
      const body = html`${projectHeader(project, 'webhooks')}
${deliveryPage({ project, signedIn: request.signedIn!, delivery, endpoint, now: app.now(), back: request.url })}`;
      return sendHtml(
        reply,
        page({
          title: `Delivery ${delivery.eventType} · ${project.name}`,
          signedIn: request.signedIn,
          section: 'projects',
          flash,
          body,
        }),
      );
    },
  );

  server.post<DeliveryParams & { Body: Form }>(
    '/projects/:projectId/webhooks/deliveries/:deliveryId/resend',
    async (request, reply) => {
      const project = await projectOf(app, request.params.projectId);
      const { delivery, endpoint } = await deliveryOf(app, project, request.params.deliveryId);
      await app.webhooks.resend(delivery.id);
      setFlash(reply, app, request.signedIn!, {
        notice: `${delivery.eventType} is being sent to ${endpoint.url} again, with the same webhook-id ${delivery.messageId}.`,
      });
      return reply.redirect(backTo(project, first(request.body?.next)), 303);
    },
  );
}
