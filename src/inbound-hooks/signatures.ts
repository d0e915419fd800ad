/**
 * Whether a webhook delivery comes from the code host that knows the secret, by each host's own
 * scheme, over the raw body bytes and before anything is parsed or stored (docs/automations.mdx, "Events in"):
 *
 * - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body, keyed by the secret>`;
 * - GitLab: `X-Gitlab-Token: <the secret itself>` (it signs nothing);
 * - Gitea: `X-Gitea-Signature: <hex HMAC-SHA256 of the body>`; Forgejo sends the same value as
 *   `X-Forgejo-Signature` too, and when that header is there it is the one checked (a wrong one
 *   is not rescued by a right `X-Gitea-Signature`).
 *
 * Every comparison takes the same time whatever the input (`timingSafeEqual` over digests of a
 * fixed length); a missing, repeated or malformed header is a refusal, and so is an empty secret
 * (anyone can compute an HMAC keyed by nothing). The cost of a refusal is bounded by the body the
 * caller read: one HMAC-SHA256 pass, about 15 ms on this project's 2-core machine for the largest
 * body worth reading (`MAX_EVENT_BODY_BYTES`, 25 MiB), and nothing for GitLab, whose token needs
 * no body. Call `checkBeforeBody` first: it refuses what the headers alone condemn before the
 * body is read.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { HookHost } from '../automations/code-events.ts';
import { type HeaderSource, headerValue } from './headers.ts';

export type SignatureRefusal =
  /** No secret is configured (or it is empty): nothing can be verified. */
  | 'no-secret'
  /** The host's signature or token header is absent. */
  | 'missing-signature'
  /** It is there but not in the host's format (or sent twice). */
  | 'malformed-signature'
  /** It does not match the body and the secret. */
  | 'bad-signature';

export type SignatureCheck = { ok: true } | { ok: false; refusal: SignatureRefusal; message: string };

const OK: SignatureCheck = { ok: true };

/** Longest `X-Gitlab-Token` accepted (GitLab takes any string as the secret token). */
export const MAX_TOKEN_LENGTH = 1_024;

type Refused = Extract<SignatureCheck, { ok: false }>;
const refuse = (refusal: SignatureRefusal, message: string): Refused => ({ ok: false, refusal, message });

/** The header that carries the signature (or token) of `host`'s deliveries, by the headers present. */
export function signatureHeader(host: HookHost, headers: HeaderSource): string {
  if (host === 'github') return 'X-Hub-Signature-256';
  if (host === 'gitlab') return 'X-Gitlab-Token';
  return headerValue(headers, 'X-Forgejo-Signature') !== undefined
    ? 'X-Forgejo-Signature'
    : 'X-Gitea-Signature';
}

/**
 * What the headers alone decide, before the body is read: a refusal for no secret or a missing
 * or malformed signature header, and GitLab's whole check (its token needs no body). `null`: the
 * body must be read and given to `verifySignature`.
 */
export function checkBeforeBody(
  host: HookHost,
  headers: HeaderSource,
  secret: string,
): SignatureCheck | null {
  const found = signatureOf(host, headers, secret);
  if (!found.ok) return found;
  if (host === 'gitlab') return equalInConstantTime(found.value, secret) ? OK : badSignature(host, headers);
  return null;
}

/** Whether `body` (the raw bytes received) carries `host`'s valid signature for `secret`. */
export function verifySignature(
  host: HookHost,
  headers: HeaderSource,
  body: Uint8Array,
  secret: string,
): SignatureCheck {
  const found = signatureOf(host, headers, secret);
  if (!found.ok) return found;
  const valid =
    host === 'gitlab'
      ? equalInConstantTime(found.value, secret)
      : timingSafeEqual(Buffer.from(found.value, 'hex'), createHmac('sha256', secret).update(body).digest());
  return valid ? OK : badSignature(host, headers);
}

/** The signature's hex digest (GitHub, Gitea) or the token (GitLab), once its form is right. */
function signatureOf(
  host: HookHost,
  headers: HeaderSource,
  secret: string,
): { ok: true; value: string } | Refused {
  if (secret === '') return refuse('no-secret', 'no webhook secret is configured');
  const name = signatureHeader(host, headers);
  const value = headerValue(headers, name);
  if (value === undefined) return refuse('missing-signature', `${name} is missing`);
  if (value === null) return refuse('malformed-signature', `${name} is sent more than once`);
  if (host === 'gitlab') {
    if (value === '' || value.length > MAX_TOKEN_LENGTH) {
      return refuse('malformed-signature', `${name} is empty or longer than ${MAX_TOKEN_LENGTH} characters`);
    }
    return { ok: true, value };
  }
  const match = (host === 'github' ? /^sha256=([0-9a-f]{64})$/i : /^([0-9a-f]{64})$/i).exec(value);
  if (!match) {
    const form = host === 'github' ? '"sha256=" and 64 hexadecimal digits' : '64 hexadecimal digits';
    return refuse('malformed-signature', `${name} is not ${form}`);
  }
  return { ok: true, value: match[1]! };
}

const badSignature = (host: HookHost, headers: HeaderSource): Refused =>
  refuse(
    'bad-signature',
    host === 'gitlab'
      ? 'X-Gitlab-Token does not match the webhook secret'
      : `${signatureHeader(host, headers)} does not match the body and the webhook secret`,
  );

/** `a === b` in a time that depends on neither (both are hashed to 32 bytes first). */
function equalInConstantTime(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
