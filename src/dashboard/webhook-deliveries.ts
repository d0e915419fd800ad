import type { ProjectView } from '../projects/projects.ts';
import type {
  WebhookAttemptView,
  WebhookDeliveryStatus,
  WebhookDeliveryView,
  WebhookEndpointView,
} from '../webhooks/webhooks.ts';
import { type Html, html } from './html.ts';
import { csrfField, oneLine, time } from './layout.ts';
import type { SignedIn } from './session.ts';

/**
 * Webhook deliveries on the dashboard (docs/webhooks.mdx): the project's list, newest first, and one
 * delivery with every attempt and the body it sends. Each has a `Re-send` button, which sends
 * the message again with the same `webhook-id`.
 */

/** A status badge; its text is the delivery's status value itself. */
export const deliveryBadge = (status: WebhookDeliveryStatus): Html =>
  html`<span class="status status-${status}">${status}</span>`;

/** What an error says beyond the status code (`HTTP 503` says nothing more; a redirect's target does). */
const news = (error: string | null, statusCode: number | null) =>
  error !== null && error !== `HTTP ${statusCode}` ? error : null;

/** The receiver's last answer: its status code, or why there was none. */
function lastResponse(delivery: WebhookDeliveryView, maxError = 120): Html {
  const error = news(delivery.lastError, delivery.lastStatusCode);
  return html`${delivery.lastStatusCode === null ? html`<span class="muted">${delivery.lastError ? 'no answer' : '—'}</span>` : html`<span class="mono">${delivery.lastStatusCode}</span>`}${error && html`<div class="small muted">${oneLine(error, maxError)}</div>`}`;
}

function nextAttempt(delivery: WebhookDeliveryView, now: Date): Html {
  if (delivery.status === 'sending') return html`now`;
  if (delivery.status === 'pending' && delivery.nextAttemptAt) return time(delivery.nextAttemptAt, now);
  return html`<span class="muted">—</span>`;
}

const jobLink = (project: ProjectView, jobId: string | null): Html | '' =>
  jobId ? html`<a class="mono" href="/projects/${project.id}/jobs/${jobId}">${jobId}</a>` : '';

/** `Re-send`, or why it cannot be (nothing is sent to a disabled endpoint). */
function resendForm(
  project: ProjectView,
  signedIn: SignedIn,
  delivery: WebhookDeliveryView,
  endpoint: WebhookEndpointView | undefined,
  back: string,
): Html {
  if (!endpoint?.enabled)
    return html`<span class="small muted">Endpoint disabled: enable it to re-send.</span>`;
  return html`<form method="post" action="/projects/${project.id}/webhooks/deliveries/${delivery.id}/resend">${csrfField(signedIn)}
    <input type="hidden" name="next" value="${back}">
    <button type="submit" class="small-button">Re-send</button></form>`;
}

export interface DeliveryRowsOptions {
  project: ProjectView;
  signedIn: SignedIn;
  deliveries: WebhookDeliveryView[];
  endpoints: Map<string, WebhookEndpointView>;
  now: Date;
  /** Where `Re-send` returns to: this page of the list. */
  back: string;
}

export function deliveryRows(options: DeliveryRowsOptions): Html {
  const { project, now } = options;
  const base = `/projects/${project.id}/webhooks/deliveries`;
  return html`<table class="hooks-table">
  <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last response</th><th scope="col">Next attempt</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
  <tbody>${options.deliveries.map((delivery) => {
    const endpoint = options.endpoints.get(delivery.endpointId);
    return html`<tr>
    <td data-label="Event"><div><a class="mono" href="${base}/${delivery.id}">${delivery.eventType}</a>
      <div class="small muted">to <span class="mono">${endpoint?.url ?? delivery.endpointId}</span></div>
      <div class="small">${delivery.jobId && html`${jobLink(project, delivery.jobId)} · `}${time(delivery.createdAt, now)}</div></div></td>
    <td data-label="Status"><div>${deliveryBadge(delivery.status)}</div></td>
    <td data-label="Attempts">${delivery.attempts}</td>
    <td data-label="Last response"><div>${lastResponse(delivery)}</div></td>
    <td data-label="Next attempt">${nextAttempt(delivery, now)}</td>
    <td data-label="">${resendForm(project, options.signedIn, delivery, endpoint, options.back)}</td>
  </tr>`;
  })}</tbody>
</table>`;
}

/** The body as sent, indented when it is JSON (it always is, unless the row was edited by hand). */
function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function attemptRows(history: WebhookAttemptView[], now: Date): Html {
  if (history.length === 0) return html`<p class="empty">Not sent yet.</p>`;
  return html`<table>
  <thead><tr><th scope="col">Attempted</th><th scope="col">Response</th><th scope="col">Took</th><th scope="col">Error or answer</th></tr></thead>
  <tbody>${history
    .slice()
    .reverse()
    .map(
      (attempt) => html`<tr>
    <td data-label="Attempted">${time(attempt.attemptedAt, now)}</td>
    <td data-label="Response">${attempt.statusCode === null ? html`<span class="muted">no answer</span>` : html`<span class="mono">${attempt.statusCode}</span>`}</td>
    <td data-label="Took">${attempt.durationMs} ms</td>
    <td data-label="Error or answer"><div>${news(attempt.error, attempt.statusCode) && html`<div class="error-text">${attempt.error}</div>`}${attempt.responseBody && html`<pre class="payload small">${attempt.responseBody}</pre>`}</div></td>
  </tr>`,
    )}</tbody>
</table>`;
}

export interface DeliveryPageOptions {
  project: ProjectView;
  signedIn: SignedIn;
  delivery: WebhookDeliveryView & { body: string; history: WebhookAttemptView[] };
  endpoint: WebhookEndpointView;
  now: Date;
  back: string;
}

/** `/projects/{projectId}/webhooks/deliveries/{deliveryId}`: one delivery, its attempts (newest first) and body. */
export function deliveryPage(options: DeliveryPageOptions): Html {
  const { project, delivery, endpoint, now } = options;
  return html`<p><a href="/projects/${project.id}/webhooks#deliveries">← All deliveries</a></p>
<section class="panel" aria-labelledby="delivery-heading">
  <div class="page-head">
    <h2 id="delivery-heading"><code>${delivery.eventType}</code> to <span class="mono wrap">${endpoint.url}</span></h2>
    ${resendForm(project, options.signedIn, delivery, endpoint, options.back)}
  </div>
  <dl class="facts">
    <dt>Status</dt><dd>${deliveryBadge(delivery.status)}</dd>
    <dt>Attempts</dt><dd>${delivery.attempts} <span class="small muted">since it was created or last re-sent</span></dd>
    <dt>Last response</dt><dd>${lastResponse(delivery, 1000)}</dd>
    <dt>Next attempt</dt><dd>${nextAttempt(delivery, now)}</dd>
    <dt>Job</dt><dd>${jobLink(project, delivery.jobId) || html`<span class="muted">—</span>`}</dd>
    <dt><code>webhook-id</code></dt><dd class="mono">${delivery.messageId}</dd>
    <dt>Delivery ID</dt><dd class="mono">${delivery.id}</dd>
    <dt>Created</dt><dd>${time(delivery.createdAt, now)}</dd>
  </dl>
</section>
<section class="panel" aria-labelledby="attempts-heading">
  <h2 id="attempts-heading">Attempts</h2>
  ${attemptRows(delivery.history, now)}
</section>
<section class="panel" aria-labelledby="payload-heading">
  <h2 id="payload-heading">Payload</h2>
  <pre class="payload" tabindex="0" aria-labelledby="payload-heading">${prettyBody(delivery.body)}</pre>
</section>`;
}
