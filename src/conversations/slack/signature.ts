/**
 * Slack's request signature, v0 (docs/slack.mdx): `X-Slack-Signature` is `v0=` and the hex
 * HMAC-SHA256, keyed with the app's signing secret, of `v0:{X-Slack-Request-Timestamp}:{raw body}`.
 * A timestamp more than five minutes from now is refused, so that a recorded request cannot be
 * replayed later; the comparison takes the same time whatever the signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a request's timestamp may be from now (Slack's advice: five minutes). */
export const SIGNATURE_WINDOW_SECONDS = 5 * 60;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

export interface SignedRequest {
  /** `X-Slack-Request-Timestamp` (seconds since the epoch), as sent. */
  timestamp: string | undefined;
  /** `X-Slack-Signature`, as sent. */
  signature: string | undefined;
  body: Uint8Array;
}

/** The signature Slack sends for `body` at `timestamp`. */
export function slackSignature(secret: string, timestamp: string, body: Uint8Array | string): string {
  const mac = createHmac('sha256', secret);
  mac.update(`v0:${timestamp}:`);
  mac.update(body);
  return `v0=${mac.digest('hex')}`;
}

/** What the headers alone refuse (before the body is read), or undefined. */
export function refusedHeaders(request: Omit<SignedRequest, 'body'>, now: Date): string | undefined {
  const { timestamp, signature } = request;
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) return 'no usable X-Slack-Request-Timestamp';
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) {
    return 'X-Slack-Request-Timestamp is more than five minutes away';
  }
  if (signature === undefined || !/^v0=[0-9a-f]{64}$/.test(signature)) return 'no usable X-Slack-Signature';
  return undefined;
}

/** Checks the request's signature with `secret` at `now`. */
export function verifySlackSignature(secret: string, request: SignedRequest, now: Date): SignatureCheck {
  const refused = refusedHeaders(request, now);
  if (refused) return { ok: false, reason: refused };
  const expected = Buffer.from(slackSignature(secret, request.timestamp!, request.body));
  const given = Buffer.from(request.signature!);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'X-Slack-Signature does not match' };
  }
  return { ok: true };
}
