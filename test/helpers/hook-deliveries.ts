import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { HookHost } from '../../src/automations/code-events.ts';

/**
 * A sample payload of test/automations/payloads, as a fresh object to change. A merged pull
 * request's `merged_at` is now: the sample is a merge that just happened, after the automations a
 * test made (one merged before an automation existed never runs it).
 */
// biome-ignore lint/suspicious/noExplicitAny: payloads are edited freely
export function samplePayload(name: string): any {
  const payload = JSON.parse(
    readFileSync(path.join(import.meta.dirname, '..', 'automations', 'payloads', `${name}.json`), 'utf8'),
  );
  if (payload.pull_request?.merged_at) payload.pull_request.merged_at = new Date().toISOString();
  return payload;
}

/** The headers a host sends with a delivery of `event`, signed with `secret` by its own scheme. */
export function signedHeaders(
  host: HookHost,
  event: string,
  body: string,
  secret: string,
  deliveryId: string = randomUUID(),
): Record<string, string> {
  const hmac = createHmac('sha256', secret).update(body).digest('hex');
  const json = { 'content-type': 'application/json' };
  switch (host) {
    case 'github':
      return {
        ...json,
        'x-github-event': event,
        'x-github-delivery': deliveryId,
        'x-hub-signature-256': `sha256=${hmac}`,
      };
    case 'gitlab':
      return { ...json, 'x-gitlab-event': event, 'idempotency-key': deliveryId, 'x-gitlab-token': secret };
    case 'gitea':
      return { ...json, 'x-gitea-event': event, 'x-gitea-delivery': deliveryId, 'x-gitea-signature': hmac };
  }
}

/** Each host's merged pull/merge request sample: its event, payload, repository URL and number. */
export const MERGE_SAMPLES: Record<
  HookHost,
  { event: string; payload: string; repository: string; number: number; apiUrl?: string }
> = {
  github: {
    event: 'pull_request',
    payload: 'github-pull-request-merged',
    repository: 'https://github.com/acme/api',
    number: 42,
  },
  gitlab: {
    event: 'Merge Request Hook',
    payload: 'gitlab-merge-request-merged',
    repository: 'https://gitlab.example.com/platform/billing',
    number: 7,
  },
  gitea: {
    event: 'pull_request',
    payload: 'gitea-pull-request-merged',
    repository: 'https://code.example.org/tools/cli',
    number: 15,
  },
};
