import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { DocwrightError } from '../errors.ts';
import type { Database } from '../store/schema.ts';

/** How long a key remembers its response (docs/api/overview.mdx). */
const RETENTION_MS = 24 * 3600 * 1000;

/** A request that carried `Idempotency-Key`, identified by what it asked for. */
export interface IdempotentRequest {
  key: string;
  /** Hash of method, path and body; see `requestFingerprint`. */
  fingerprint: string;
}

export interface StoredResponse {
  statusCode: number;
  body: unknown;
  location: string | null;
}

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
 * The response a key already produced, if any. Must run in the creating
 * transaction after `lockProject`, so that two requests with one key cannot
 * both miss. A key reused for a different request is refused (422).
 */
export async function findReplay(
  trx: Transaction<Database>,
  projectId: string,
  request: IdempotentRequest,
  now: Date,
): Promise<StoredResponse | undefined> {
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
  return { statusCode: row.status_code, body: JSON.parse(row.body), location: row.location };
}

export async function rememberResponse(
  trx: Transaction<Database>,
  projectId: string,
  request: IdempotentRequest,
  response: StoredResponse,
  now: Date,
): Promise<void> {
  await trx
    .insertInto('idempotency_keys')
    .values({
      project_id: projectId,
      key: request.key,
      fingerprint: request.fingerprint,
      status_code: response.statusCode,
      body: JSON.stringify(response.body),
      location: response.location,
      created_at: now.toISOString(),
    })
    .execute();
}
