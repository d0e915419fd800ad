import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { DocwrightError } from '../errors.ts';
import type { Database } from '../store/schema.ts';
import type { AgentJob } from './agent-job.ts';
import type { RememberedWork } from './work-result.ts';

/** How long a key remembers its response (docs/api/overview.mdx). */
const RETENTION_MS = 24 * 3600 * 1000;

/** A request that carried `Idempotency-Key`, identified by what it asked for. */
export interface IdempotentRequest {
  key: string;
  /** Hash of method, path and body; see `requestFingerprint`. */
  fingerprint: string;
}

/**
 * How a record says whether its request created the job. The column keeps the numbers it held
 * when records were HTTP responses (201 for a create, 200 for a follow-up or a retry), so that
 * records written before read the same; what they are answered with is the surface's business.
 */
const CREATED = 201;
const CONTINUED = 200;

/** Key order and whitespace do not make a different request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

/**
 * The work a key already did, if any. Must run in the creating transaction after
 * `lockProject`, so that two requests with one key cannot both miss. A key reused for a
 * different request is refused (`idempotency-key-mismatch`).
 */
export async function findReplay(
  trx: Transaction<Database>,
  projectId: string,
  request: IdempotentRequest,
  now: Date,
): Promise<RememberedWork | undefined> {
  const row = await trx
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('key', '=', request.key)
    .executeTakeFirst();
  if (!row) return undefined;
  if (Date.parse(row.created_at) <= now.getTime() - RETENTION_MS) {
    await trx
      .deleteFrom('idempotency_keys')
      .where('project_id', '=', projectId)
      .where('key', '=', request.key)
      .execute();
    return undefined;
  }
  if (row.fingerprint !== request.fingerprint) {
    throw new DocwrightError(
      'idempotency-key-mismatch',
      'this Idempotency-Key was already used with a different request; use a new key for a new request',
    );
  }
  // The job as the first request left it, not as it is now: a replay answers what the first did.
  const job: AgentJob = JSON.parse(row.body);
  return { job, created: row.status_code === CREATED };
}

/** Remembers the work `request` did, in the transaction that did it. */
export async function rememberWork(
  trx: Transaction<Database>,
  projectId: string,
  request: IdempotentRequest,
  work: RememberedWork,
  now: Date,
): Promise<void> {
  await trx
    .insertInto('idempotency_keys')
    .values({
      project_id: projectId,
      key: request.key,
      fingerprint: request.fingerprint,
      status_code: work.created ? CREATED : CONTINUED,
      body: JSON.stringify(work.job),
      // Records written before held the `Location` answered; the surface now builds it from the job.
      location: null,
      created_at: now.toISOString(),
    })
    .execute();
}
