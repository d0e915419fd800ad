import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

/** The target and payload of a claimed delivery: what the dispatcher needs to send it. */
export interface DeliveryContext {
  url: string;
  /** The endpoint's signing secret, sealed (`WebhookService.openSecret` opens it). */
  sealedSecret: string;
  disabled: boolean;
  messageId: string;
  body: string;
}

/** A delivery's endpoint and message; undefined when the endpoint was deleted (and the delivery with it). */
export async function deliveryContext(
  db: Kysely<Database>,
  deliveryId: string,
): Promise<DeliveryContext | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
    .select(['e.url', 'e.secret', 'e.disabled_at', 'm.id as message_id', 'm.body'])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
  return row
    ? {
        url: row.url,
        sealedSecret: row.secret,
        disabled: row.disabled_at !== null,
        messageId: row.message_id,
        body: row.body,
      }
    : undefined;
}
