/**
 * Verified Slack events (docs/slack.mdx): stored once per Slack `event_id` before the request is
 * acknowledged, then processed in the background. A process takes an event by claiming it for
 * `CLAIM_MS`; one that crashes mid-way leaves it to be taken again once the claim lapses, and
 * what processing creates is keyed by the event id (the job's Idempotency-Key), so that a second
 * attempt repeats nothing.
 */
import type { Kysely } from 'kysely';
import { newSlackEventId } from '../../ids.ts';
import type { Database } from '../../store/schema.ts';
import type { SlackEventTable } from '../../store/slack-schema.ts';

export type SlackEventRow = SlackEventTable;

/** How long a claimed event is left to the process that claimed it. */
export const CLAIM_MS = 60_000;

export type SlackEvents = ReturnType<typeof createSlackEvents>;

export function createSlackEvents(deps: { db: Kysely<Database>; now: () => Date }) {
  const { db } = deps;
  return {
    /** Stores a verified event; false when its event id was stored before (a retry). */
    async store(event: { eventId: string; eventType: string | null; body: string }): Promise<boolean> {
      const inserted = await db
        .insertInto('slack_events')
        .values({
          id: newSlackEventId(),
          event_id: event.eventId,
          event_type: event.eventType,
          body: event.body,
          received_at: deps.now().toISOString(),
          claimed_until: null,
          processed_at: null,
          result: null,
        })
        .onConflict((oc) => oc.column('event_id').doNothing())
        .returning('id')
        .execute();
      return inserted.length === 1;
    },

    /**
     * Takes the oldest waiting event nobody holds (or whose holder's claim lapsed), or undefined.
     * The conditional update decides between processes: only one of them changes the row.
     */
    async claimNext(): Promise<SlackEventRow | undefined> {
      for (let tries = 0; tries < 5; tries++) {
        const at = deps.now();
        const candidate = await db
          .selectFrom('slack_events')
          .selectAll()
          .where('processed_at', 'is', null)
          .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', at.toISOString())]))
          .orderBy('received_at')
          .orderBy('id')
          .limit(1)
          .executeTakeFirst();
        if (!candidate) return undefined;
        const until = new Date(at.getTime() + CLAIM_MS).toISOString();
        let update = db
          .updateTable('slack_events')
          .set({ claimed_until: until })
          .where('id', '=', candidate.id)
          .where('processed_at', 'is', null);
        update =
          candidate.claimed_until === null
            ? update.where('claimed_until', 'is', null)
            : update.where('claimed_until', '=', candidate.claimed_until);
        const taken = await update.returning('id').execute();
        if (taken.length === 1) return { ...candidate, claimed_until: until };
      }
      return undefined;
    },

    async markProcessed(id: string, result: string): Promise<void> {
      await db
        .updateTable('slack_events')
        .set({ processed_at: deps.now().toISOString(), result: result.slice(0, 500) })
        .where('id', '=', id)
        .execute();
    },
  };
}
