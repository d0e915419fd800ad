/**
 * What names a webhook delivery, by host: its delivery id (what a redelivery repeats, so that it
 * creates nothing new) and its event type.
 *
 * - GitHub: `X-GitHub-Delivery` (kept by redeliveries), `X-GitHub-Event`.
 * - GitLab: `Idempotency-Key` (GitLab 17.4 and later; kept by retries), else `X-Gitlab-Event-UUID`
 *   (older GitLab; shared by the hooks that one request set off, and kept by automatic retries).
 *   Not `X-Gitlab-Webhook-UUID`, which is new on every attempt. Event: `X-Gitlab-Event`.
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
  gitlab: ['Idempotency-Key', 'X-Gitlab-Event-UUID'],
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

/** The delivery's id: the host's header when usable, else `sha256:` and the body's digest. */
export function deliveryIdOf(host: HookHost, headers: HeaderSource, body: Uint8Array): string {
  const id = firstUsable(headers, DELIVERY_HEADERS[host], /^[\x21-\x7e]+$/, MAX_DELIVERY_ID_LENGTH);
  return id ?? `sha256:${createHash('sha256').update(body).digest('hex')}`;
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
