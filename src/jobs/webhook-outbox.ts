/**
 * Writes a webhook message, and one delivery per subscribed endpoint, inside the transaction
 * of the job change it reports (docs/webhooks.mdx): the change and its notification commit together or
 * not at all, and the dispatcher sends what committed.
 */
import type { Kysely } from 'kysely';
import { newWebhookDeliveryId, newWebhookMessageId } from '../ids.ts';
import { compiledQuery } from '../store/compiled-query.ts';
import type { Database, JobRow, WebhookEndpointRow } from '../store/schema.ts';
import { toAgentJob } from './agent-job.ts';
import type { WebhookEventType } from './webhook-events.ts';

export interface JobMessage {
  type: WebhookEventType;
  projectId: string;
  jobId: string;
  /** The job as the change left it; read from the transaction when not given. */
  job?: JobRow;
  at: Date;
}

/** Whether an endpoint's `events` (stored JSON) include `type`. */
export const subscribes = (events: string, type: WebhookEventType): boolean =>
  (JSON.parse(events) as string[]).includes(type);

/** The body of the message that reports `job` as of `at` (ISO). */
export const messageBody = (type: WebhookEventType, job: JobRow, at: string): string =>
  JSON.stringify({ type, timestamp: at, data: toAgentJob(job) });

/** Returns the message id, or undefined when no endpoint of the project wants this type. */
export async function enqueueJobMessage(
  trx: Kysely<Database>,
  message: JobMessage,
): Promise<string | undefined> {
  const { rows: endpoints } = await trx.executeQuery(enabledEndpoints(trx, { projectId: message.projectId }));
  const subscribed = endpoints.filter((e) => subscribes(e.events, message.type));
  if (subscribed.length === 0) return undefined;

  const job =
    message.job ??
    (await trx.selectFrom('jobs').selectAll().where('id', '=', message.jobId).executeTakeFirstOrThrow());
  const at = message.at.toISOString();
  const id = newWebhookMessageId();
  const body = messageBody(message.type, job, at);
  await trx
    .insertInto('webhook_messages')
    .values({
      id,
      project_id: message.projectId,
      job_id: message.jobId,
      type: message.type,
      body,
      created_at: at,
    })
    .execute();
  await trx
    .insertInto('webhook_deliveries')
    .values(
      subscribed.map((endpoint) => ({
        id: newWebhookDeliveryId(),
        message_id: id,
        endpoint_id: endpoint.id,
        project_id: message.projectId,
        status: 'pending' as const,
        next_attempt_at: at,
        lease_owner: null,
        lease_expires_at: null,
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        created_at: at,
        updated_at: at,
      })),
    )
    .execute();
  return id;
}

/** Every job change reads these (creates, run endings): compiled once. */
const enabledEndpoints = compiledQuery<{ projectId: string }, Pick<WebhookEndpointRow, 'id' | 'events'>>(
  ['projectId'],
  (db, p) =>
    db
      .selectFrom('webhook_endpoints')
      .select(['id', 'events'])
      .where('project_id', '=', p.projectId)
      .where('disabled_at', 'is', null)
      .compile(),
);
