/**
 * A verified webhook delivery as a code event (code-events.ts): the body decoded (JSON, or
 * GitHub's and Gitea's form encoding), parsed and handed to its host's reader. Call it only once
 * the delivery's signature holds (src/inbound-hooks/signatures.ts): it parses what it is given.
 *
 * Never throws: a body that is not JSON, an event automations do not use or a payload in an
 * unexpected shape is `ignored`, with the reason.
 */
import { type HookHost, type HostEvent, ignored } from './code-events.ts';
import { giteaEvent } from './gitea-events.ts';
import { githubEvent } from './github-events.ts';
import { gitlabEvent } from './gitlab-events.ts';
import { jsonBoundsProblem } from './json-bounds.ts';

/**
 * The largest body worth reading: GitHub caps its payloads at 25 MB and GitLab its requests at
 * 25 MiB. The inbound endpoint refuses longer bodies before reading them whole.
 */
export const MAX_EVENT_BODY_BYTES = 25 * 1024 * 1024;

export interface HostDelivery {
  host: HookHost;
  /** The value of the host's event header (`X-GitHub-Event`, `X-Gitlab-Event`, `X-Gitea-Event`). */
  event: string | null;
  /** The body as received (and verified). */
  body: Uint8Array;
  /** The `Content-Type` header: GitHub and Gitea can send `application/x-www-form-urlencoded`. */
  contentType?: string | null;
}

const READERS: Record<HookHost, (event: string, payload: unknown) => HostEvent> = {
  github: githubEvent,
  gitlab: gitlabEvent,
  gitea: giteaEvent,
};

export function normaliseEvent(delivery: HostDelivery): HostEvent {
  const { event } = delivery;
  if (event === null || event.trim() === '') return ignored('the delivery names no event');
  if (delivery.body.byteLength > MAX_EVENT_BODY_BYTES) {
    return ignored(`the body is larger than ${MAX_EVENT_BODY_BYTES} bytes`);
  }
  const payload = parseBody(delivery.body, delivery.contentType ?? null);
  if (typeof payload === 'string') return ignored(`the body is not parsed: ${payload}`);
  if (payload === undefined) return ignored('the body is not a JSON object');
  return READERS[delivery.host](event.trim(), payload);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The payload object, undefined when the body holds none, or why it is not parsed at all (too
 * deep or too many values: json-bounds.ts). Pull request comments read their deliveries with it too.
 */
export function parseBody(body: Uint8Array, contentType: string | null): object | string | undefined {
  let text: string | null;
  try {
    text = utf8.decode(body);
  } catch {
    return undefined;
  }
  if (contentType !== null && /^\s*application\/x-www-form-urlencoded\b/i.test(contentType)) {
    text = new URLSearchParams(text).get('payload');
    if (text === null) return undefined;
  }
  const problem = jsonBoundsProblem(text);
  if (problem !== undefined) return problem;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
