/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): secrets are `whsec_` and the
 * base64 of random bytes; a signature is `v1,` and the base64 HMAC-SHA256, keyed with those
 * bytes, of `<webhook-id>.<webhook-timestamp>.<body>`. Written against the specification, and
 * checked in the tests by the `standardwebhooks` reference library.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** 24 bytes: within the 24–64 the specification asks for. */
const SECRET_BYTES = 24;

export const newWebhookSecret = (): string =>
  `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

/** The `webhook-signature` header for one attempt. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}
