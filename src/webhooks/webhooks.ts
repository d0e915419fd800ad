/**
 * Webhook endpoints and their delivery history (docs/webhooks.mdx): what the CLI and the dashboard's
 * project settings use. Secrets are shown once, at creation, and stored sealed.
 */
import { z } from 'zod';
import { DocwrightError } from '../errors.ts';
import { isWebhookDeliveryId, isWebhookEndpointId, newWebhookEndpointId } from '../ids.ts';
import type { SecretBox } from '../projects/secret-box.ts';
import { processSecrets } from '../redact.ts';
import type { Store } from '../store/database.ts';
import type { WebhookDeliveryRow, WebhookDeliveryStatus, WebhookEndpointRow } from '../store/schema.ts';

export type { WebhookDeliveryStatus };

import {
  DEFAULT_WEBHOOK_EVENTS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../jobs/webhook-events.ts';
import { parseOrThrow } from '../validation.ts';
import { checkUrlHost, EgressRefused } from './egress.ts';
import { newWebhookSecret } from './signature.ts';

/** More would make every job change fan out to an unbounded number of rows. */
export const MAX_ENDPOINTS_PER_PROJECT = 20;

/** An endpoint as every command and page shows it: never its secret. */
export interface WebhookEndpointView {
  id: string;
  projectId: string;
  url: string;
  description: string | null;
  events: WebhookEventType[];
  /** False once the endpoint answered 410 Gone or was disabled; nothing is sent to it then. */
  enabled: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One message on its way to one endpoint. */
export interface WebhookDeliveryView {
  id: string;
  endpointId: string;
  /** The `webhook-id` header receivers see, the same on every attempt and re-send. */
  messageId: string;
  eventType: string;
  jobId: string | null;
  status: WebhookDeliveryStatus;
  /** Attempts since the delivery was created or last re-sent. */
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookAttemptView {
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  /** The start of the answer's body (at most 1 KiB). */
  responseBody: string | null;
  durationMs: number;
}

export interface WebhookDeliveryPage {
  deliveries: WebhookDeliveryView[];
  nextCursor: string | null;
}

const createInput = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .max(2000, 'must be at most 2000 characters'),
  events: z
    .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }))
    .min(1, 'must name at least one event type')
    .optional(),
  description: z.string().trim().min(1).max(200).optional(),
});
export type WebhookEndpointInput = z.input<typeof createInput>;

const deliveriesQuery = z.strictObject({
  endpointId: z.string().optional(),
  status: z.enum(['pending', 'sending', 'succeeded', 'failed']).optional(),
  limit: z.coerce.number().int().min(1).max(100, 'must be at most 100').default(20),
  cursor: z.string().max(200).optional(),
});
export type WebhookDeliveriesQuery = z.input<typeof deliveriesQuery>;

export type WebhookService = ReturnType<typeof createWebhookService>;

export function createWebhookService(deps: {
  store: Store;
  secretBox: () => SecretBox;
  /** `DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE`: endpoints on private addresses are accepted. */
  allowPrivate: boolean;
  now?: () => Date;
}) {
  const { db } = deps.store;
  const now = () => (deps.now ?? (() => new Date()))().toISOString();

  const endpointView = (row: WebhookEndpointRow): WebhookEndpointView => ({
    id: row.id,
    projectId: row.project_id,
    url: row.url,
    description: row.description,
    events: JSON.parse(row.events) as WebhookEventType[],
    enabled: row.disabled_at === null,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });

  const deliveryView = (
    row: WebhookDeliveryRow & { type: string; job_id: string | null },
  ): WebhookDeliveryView => ({
    id: row.id,
    endpointId: row.endpoint_id,
    messageId: row.message_id,
    eventType: row.type,
    jobId: row.job_id,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });

  const deliveries = () =>
    db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
      .selectAll('d')
      .select(['m.type', 'm.job_id']);

  async function mustGetEndpoint(id: string): Promise<WebhookEndpointRow> {
    const row = isWebhookEndpointId(id)
      ? await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()
      : undefined;
    if (!row) throw new DocwrightError('webhook-not-found', `webhook endpoint ${id} does not exist`);
    return row;
  }

  async function mustGetDelivery(id: string) {
    const row = isWebhookDeliveryId(id)
      ? await deliveries().where('d.id', '=', id).executeTakeFirst()
      : undefined;
    if (!row) throw new DocwrightError('delivery-not-found', `webhook delivery ${id} does not exist`);
    return row;
  }

  async function mustHaveProject(projectId: string): Promise<void> {
    const found = await db.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst();
    if (!found) throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
  }

  /** Stops sending to an endpoint; its queued deliveries fail with `reason`. */
  async function disable(id: string, reason: string): Promise<WebhookEndpointView> {
    const at = now();
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable('webhook_endpoints')
        .set({ disabled_at: at, disabled_reason: reason, updated_at: at })
        .where('id', '=', id)
        .where('disabled_at', 'is', null)
        .execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status: 'failed',
          next_attempt_at: null,
          lease_owner: null,
          lease_expires_at: null,
          last_error: `not sent: the endpoint was disabled (${reason})`,
          updated_at: at,
        })
        .where('endpoint_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
    });
    return endpointView(await mustGetEndpoint(id));
  }

  function openSecret(sealed: string): string {
    const secret = deps.secretBox().open(sealed);
    processSecrets.add(secret);
    return secret;
  }

  return {
    /** Creates an endpoint; `secret` (`whsec_…`) is returned this once and never again. */
    async createEndpoint(
      projectId: string,
      raw: WebhookEndpointInput,
      /** `allowPrivate`: as the processes that will send judge it (a command's own setting may differ). */
      options: { allowPrivate?: boolean } = {},
    ): Promise<WebhookEndpointView & { secret: string }> {
      const input = parseOrThrow(createInput, raw);
      const url = new URL(input.url);
      if (url.username || url.password) {
        const message = 'must not carry credentials (user:password@); check the signature instead';
        throw new DocwrightError('invalid-request', `url ${message}`, {
          fields: [{ field: 'url', message }],
        });
      }
      if (!(options.allowPrivate ?? deps.allowPrivate)) {
        try {
          checkUrlHost(url);
        } catch (error) {
          if (!(error instanceof EgressRefused)) throw error;
          throw new DocwrightError('invalid-request', `url ${error.message}`, {
            fields: [{ field: 'url', message: error.message }],
          });
        }
      }
      await mustHaveProject(projectId);
      const count = await db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('project_id', '=', projectId)
        .executeTakeFirstOrThrow();
      if (Number(count.n) >= MAX_ENDPOINTS_PER_PROJECT) {
        throw new DocwrightError(
          'invalid-request',
          `a project has at most ${MAX_ENDPOINTS_PER_PROJECT} webhook endpoints; delete one first`,
        );
      }
      const secret = newWebhookSecret();
      const at = now();
      const row: WebhookEndpointRow = {
        id: newWebhookEndpointId(),
        project_id: projectId,
        url: url.href,
        description: input.description ?? null,
        events: JSON.stringify([...new Set(input.events ?? DEFAULT_WEBHOOK_EVENTS)]),
        secret: deps.secretBox().seal(secret),
        created_at: at,
        updated_at: at,
        disabled_at: null,
        disabled_reason: null,
      };
      await db.insertInto('webhook_endpoints').values(row).execute();
      return { ...endpointView(row), secret };
    },

    async listEndpoints(projectId: string): Promise<WebhookEndpointView[]> {
      await mustHaveProject(projectId);
      const rows = await db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute();
      return rows.map(endpointView);
    },

    async getEndpoint(id: string): Promise<WebhookEndpointView> {
      return endpointView(await mustGetEndpoint(id));
    },

    /** Deletes an endpoint with its delivery history. */
    async deleteEndpoint(id: string): Promise<WebhookEndpointView> {
      const row = await mustGetEndpoint(id);
      await db.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
      return endpointView(row);
    },

    disableEndpoint: (id: string, reason = 'disabled by an operator') =>
      mustGetEndpoint(id).then(() => disable(id, reason)),

    /** Sends to the endpoint again (deliveries that failed meanwhile can be re-sent). */
    async enableEndpoint(id: string): Promise<WebhookEndpointView> {
      await mustGetEndpoint(id);
      await db
        .updateTable('webhook_endpoints')
        .set({ disabled_at: null, disabled_reason: null, updated_at: now() })
        .where('id', '=', id)
        .execute();
      return endpointView(await mustGetEndpoint(id));
    },

    /** A project's deliveries, newest first, optionally of one endpoint or in one state. */
    async listDeliveries(
      projectId: string,
      rawQuery: WebhookDeliveriesQuery = {},
    ): Promise<WebhookDeliveryPage> {
      const query = parseOrThrow(deliveriesQuery, rawQuery, 'query');
      await mustHaveProject(projectId);
      let select = deliveries().where('d.project_id', '=', projectId);
      if (query.endpointId) select = select.where('d.endpoint_id', '=', query.endpointId);
      if (query.status) select = select.where('d.status', '=', query.status);
      if (query.cursor) select = select.where('d.id', '<', query.cursor);
      const rows = await select
        .orderBy('d.id', 'desc')
        .limit(query.limit + 1)
        .execute();
      const page = rows.slice(0, query.limit);
      return {
        deliveries: page.map(deliveryView),
        nextCursor: rows.length > query.limit ? page.at(-1)!.id : null,
      };
    },

    /** One delivery with every attempt, oldest first, and the body it sends. */
    async getDelivery(
      id: string,
    ): Promise<WebhookDeliveryView & { body: string; history: WebhookAttemptView[] }> {
      const row = await mustGetDelivery(id);
      const message = await db
        .selectFrom('webhook_messages')
        .select('body')
        .where('id', '=', row.message_id)
        .executeTakeFirstOrThrow();
      const attempts = await db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('delivery_id', '=', id)
        .orderBy('id')
        .execute();
      return {
        ...deliveryView(row),
        body: message.body,
        history: attempts.map((a) => ({
          attemptedAt: a.attempted_at,
          statusCode: a.status_code,
          error: a.error,
          responseBody: a.response_body,
          durationMs: Number(a.duration_ms),
        })),
      };
    },

    /**
     * Sends a delivery again, now, with the same `webhook-id` (receivers that de-duplicate see a
     * repeat) and a fresh retry schedule. Whatever state it was in; not to a disabled endpoint.
     */
    async resend(id: string): Promise<WebhookDeliveryView> {
      const row = await mustGetDelivery(id);
      const endpoint = await mustGetEndpoint(row.endpoint_id);
      if (endpoint.disabled_at) {
        throw new DocwrightError(
          'webhook-disabled',
          `webhook endpoint ${endpoint.id} is disabled (${endpoint.disabled_reason}); enable it first`,
        );
      }
      const at = now();
      const updated = await db
        .updateTable('webhook_deliveries')
        .set({
          status: 'pending',
          attempts: 0,
          next_attempt_at: at,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: at,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw new DocwrightError('delivery-not-found', `webhook delivery ${id} does not exist`);
      // What the resend did: a running dispatcher may claim the delivery at once, before a read.
      return deliveryView({ ...updated, type: row.type, job_id: row.job_id });
    },

    /** Stops sending to an endpoint because it answered 410 Gone (the dispatcher's call). */
    disableGone: (id: string) => disable(id, 'the endpoint answered 410 Gone'),

    /** The `whsec_…` secrets of the project's endpoints, opened: a run's outputs are scrubbed of them. */
    async endpointSecrets(projectId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('webhook_endpoints')
        .select('secret')
        .where('project_id', '=', projectId)
        .execute();
      return rows.map((row) => openSecret(row.secret));
    },

    /** Opens an endpoint's sealed secret for signing; it joins the secrets logs are scrubbed of. */
    openSecret,
  };
}
