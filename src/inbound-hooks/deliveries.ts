/**
 * What names a webhook delivery, by host: its delivery id (what a redelivery repeats, so that it
 * creates nothing new) and its event type.
 *
 * - GitHub: `X-GitHub-Delivery` (kept by redeliveries), `X-GitHub-Event`.
 * - GitLab: `Idempotency-Key` (GitLab 17.4 and later; kept by retries). Older GitLab sends only
 *   `X-Gitlab-Event-UUID`, kept by automatic retries but shared by every event that one request
 *   sends to one webhook: it is taken with the body's digest, so that two events of one request
 *   stay two deliveries. Never `X-Gitlab-Webhook-UUID`, which is new on every attempt. Event:
 *   `X-Gitlab-Event`.
 * - Gitea and Forgejo: `X-Forgejo-Delivery` or `X-Gitea-Delivery`, `X-Forgejo-Event` or
 *   `X-Gitea-Event` (Forgejo sends both names).
 *
 * A delivery without a usable id is named by the SHA-256 of its body: the same body again is then
 * the same delivery.
 */
import { createHash } from 'node:crypto';
import type { HookHost } from '../automations/code-events.ts';
import { type HeaderSource, headerValue } from './headers.ts';

const DELIVERY_HEADERS: Record<HookHost, readonly string[]> = {
  github: ['X-GitHub-Delivery'],
  gitlab: ['Idempotency-Key'],
  gitea: ['X-Forgejo-Delivery', 'X-Gitea-Delivery'],
};

const EVENT_HEADERS: Record<HookHost, readonly string[]> = {
  github: ['X-GitHub-Event'],
  gitlab: ['X-Gitlab-Event'],
  gitea: ['X-Forgejo-Event', 'X-Gitea-Event'],
};

/** Longest delivery id taken from a header; longer ones are replaced by the body's digest. */
export const MAX_DELIVERY_ID_LENGTH = 200;
/** Longest event type taken (GitLab's are words such as `Merge Request Hook`). */
export const MAX_EVENT_LENGTH = 100;

const ID_FORM = /^[\x21-\x7e]+$/;

/**
 * The delivery's id: the host's header when usable (GitLab's older one with the body's digest),
 * else `sha256:` and the body's digest.
 */
export function deliveryIdOf(host: HookHost, headers: HeaderSource, body: Uint8Array): string {
  const id = firstUsable(headers, DELIVERY_HEADERS[host], ID_FORM, MAX_DELIVERY_ID_LENGTH);
  if (id !== null) return id;
  const digest = createHash('sha256').update(body).digest('hex');
  const eventUuid = host === 'gitlab' ? firstUsable(headers, ['X-Gitlab-Event-UUID'], ID_FORM, 100) : null;
  return eventUuid === null ? `sha256:${digest}` : `${eventUuid}:${digest.slice(0, 16)}`;
}

/** The delivery's event type, or null when the host sent none that is usable. */
export function eventOf(host: HookHost, headers: HeaderSource): string | null {
  return firstUsable(
    headers,
    EVENT_HEADERS[host],
    /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/,
    MAX_EVENT_LENGTH,
  );
}

function firstUsable(
  headers: HeaderSource,
  names: readonly string[],
  form: RegExp,
  max: number,
): string | null {
  for (const name of names) {
    const value = headerValue(headers, name);
    if (typeof value === 'string' && value.length <= max && form.test(value)) return value;
  }
  return null;
}
