/**
 * Verified webhook deliveries (docs/automations.mdx, "Events in"): which secret and host a hook URL's
 * deliveries are checked against, and the durable store that answers 202 before any processing.
 * A delivery is stored once per (project, name, delivery id): a redelivery stores nothing.
 */
import type { Kysely } from 'kysely';
import { newHookDeliveryId } from '../ids.ts';
import type { ProjectService } from '../projects/projects.ts';
import type { HookDeliveryTable } from '../store/automation-schema.ts';
import type { Database } from '../store/schema.ts';
import { DOCS_REPOSITORY } from './automation.ts';
import type { HookHost } from './code-events.ts';
import type { ContextRepositories, WatchedRepository } from './repositories.ts';

export interface HookDeliveryInput {
  projectId: string;
  name: string;
  deliveryId: string;
  host: HookHost;
  event: string | null;
  contentType: string | null;
  body: Uint8Array;
}

export type HookDeliveryRow = HookDeliveryTable;

/** A delivery as people see it (`automation deliveries`, an automation's page): no body. */
export interface HookDeliverySummary {
  id: string;
  /** The hook URL's repository: a context repository's name, or `docs`. */
  name: string;
  deliveryId: string;
  host: string;
  event: string | null;
  receivedAt: string;
  /** Null while it waits to be processed. */
  processedAt: string | null;
  /** `runs: N`, `ignored: <why>`, `failed: <code>`; null while waiting. */
  result: string | null;
}

export type HookDeliveryStore = ReturnType<typeof createHookDeliveryStore>;

/**
 * How long a hook URL's secret and host are remembered, found or not: a burst of deliveries (or
 * of forged requests) then costs a signature check each, not a database read. A changed secret
 * takes effect within this time.
 */
export const VERIFIER_TTL_MS = 10_000;
/** Hook URLs remembered at most (the oldest are forgotten first). */
const VERIFIER_CACHE_SIZE = 1_000;

/** The event types of pushes, by host (`push`: GitHub, Gitea, Forgejo; `Push Hook`: GitLab). */
const PUSH_EVENTS = ['push', 'Push Hook'];

type Verifier = { secret: string; host: HookHost | null } | undefined;

export function createHookDeliveryStore(deps: {
  store: { db: Kysely<Database> };
  projects: ProjectService;
  contexts: ContextRepositories;
  now: () => Date;
}) {
  const { db } = deps.store;
  const verifiers = new Map<string, { value: Promise<Verifier>; until: number }>();

  /** The project's repository named `name` (`docs`: its own), with credentials; undefined when there is none. */
  async function repositoryOf(projectId: string, name: string): Promise<WatchedRepository | undefined> {
    if (name === DOCS_REPOSITORY) {
      const project = await deps.projects.getRow(projectId);
      if (!project) return undefined;
      return {
        name,
        repository: project.repository,
        host: project.host as WatchedRepository['host'],
        apiUrl: project.api_url,
        ref: project.ref,
      };
    }
    return (await deps.contexts.accessFor(projectId)).find((r) => r.name === name);
  }

  async function lookUpVerifier(projectId: string, name: string): Promise<Verifier> {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name) || !/^prj_[0-9a-z]{26}$/.test(projectId)) {
      return undefined;
    }
    const repository = await repositoryOf(projectId, name);
    if (!repository) return undefined;
    const secret = await deps.contexts.webhookSecretFor(projectId, name);
    if (!secret) return undefined;
    return { secret, host: repository.host === 'local' ? null : repository.host };
  }

  return {
    repositoryOf,

    /**
     * What deliveries to `/hooks/{projectId}/{name}` are checked with: the secret, and the
     * repository's host (null for a local one: the headers tell). Undefined: no such project,
     * repository or secret — every delivery is refused alike.
     */
    verifierFor(projectId: string, name: string): Promise<Verifier> {
      const key = `${projectId}/${name}`;
      const now = Date.now();
      const cached = verifiers.get(key);
      if (cached && cached.until > now) return cached.value;
      const value = lookUpVerifier(projectId, name);
      verifiers.delete(key);
      if (verifiers.size >= VERIFIER_CACHE_SIZE) verifiers.delete(verifiers.keys().next().value!);
      verifiers.set(key, { value, until: now + VERIFIER_TTL_MS });
      // A failed lookup (the database) is not remembered.
      value.catch(() => verifiers.delete(key));
      return value;
    },

    /** Stores a verified delivery; false when the same delivery id was stored before. */
    async store(delivery: HookDeliveryInput): Promise<boolean> {
      const inserted = await db
        .insertInto('hook_deliveries')
        .values({
          id: newHookDeliveryId(),
          project_id: delivery.projectId,
          name: delivery.name,
          delivery_id: delivery.deliveryId,
          host: delivery.host,
          event: delivery.event,
          content_type: delivery.contentType,
          body: Buffer.from(delivery.body).toString('base64'),
          received_at: deps.now().toISOString(),
          processed_at: null,
          result: null,
        })
        .onConflict((oc) => oc.columns(['project_id', 'name', 'delivery_id']).doNothing())
        .returning('id')
        .execute();
      return inserted.length === 1;
    },

    /**
     * Deliveries not processed yet, oldest first; pushes only once received before `pushesBefore`
     * (ISO 8601), so that the pull request event a merge sends beside its push is read first.
     */
    async waiting(pushesBefore: string, limit = 20): Promise<HookDeliveryRow[]> {
      return db
        .selectFrom('hook_deliveries')
        .selectAll()
        .where('processed_at', 'is', null)
        .where((eb) =>
          eb.or([
            eb('event', 'is', null),
            eb('event', 'not in', PUSH_EVENTS),
            eb('received_at', '<=', pushesBefore),
          ]),
        )
        .orderBy('received_at')
        .orderBy('id')
        .limit(limit)
        .execute();
    },

    /** When the oldest push held back (see `waiting`) arrived, or undefined when none waits. */
    async oldestWaitingPush(): Promise<string | undefined> {
      const row = await db
        .selectFrom('hook_deliveries')
        .select('received_at')
        .where('processed_at', 'is', null)
        .where('event', 'in', PUSH_EVENTS)
        .orderBy('received_at')
        .limit(1)
        .executeTakeFirst();
      return row?.received_at;
    },

    /** The project's deliveries, newest first: to the hook URLs of `names` when given. */
    async recent(
      projectId: string,
      options: { names?: string[]; limit?: number } = {},
    ): Promise<HookDeliverySummary[]> {
      let query = db
        .selectFrom('hook_deliveries')
        .select(['id', 'name', 'delivery_id', 'host', 'event', 'received_at', 'processed_at', 'result'])
        .where('project_id', '=', projectId);
      if (options.names) query = query.where('name', 'in', options.names.length > 0 ? options.names : ['']);
      const rows = await query
        .orderBy('received_at', 'desc')
        .orderBy('id', 'desc')
        .limit(options.limit ?? 20)
        .execute();
      return rows.map((row) => ({
        id: row.id,
        name: row.name,
        deliveryId: row.delivery_id,
        host: row.host,
        event: row.event,
        receivedAt: row.received_at,
        processedAt: row.processed_at,
        result: row.result,
      }));
    },

    async markProcessed(id: string, result: string): Promise<void> {
      await db
        .updateTable('hook_deliveries')
        .set({ processed_at: deps.now().toISOString(), result: result.slice(0, 500) })
        .where('id', '=', id)
        .execute();
    },
  };
}
