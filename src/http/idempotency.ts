import type { FastifyRequest } from 'fastify';
import { DocwrightError } from '../errors.ts';
import { type IdempotentRequest, requestFingerprint } from '../jobs/idempotency.ts';

/** `Idempotency-Key` plus what identifies the request, or undefined without the header. */
export function idempotencyOf(request: FastifyRequest): IdempotentRequest | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key)) {
    const message = 'must be 1 to 255 visible ASCII characters';
    throw new DocwrightError('invalid-request', `Idempotency-Key ${message}`, {
      fields: [{ field: 'header.Idempotency-Key', message }],
    });
  }
  const path = request.url.split('?')[0]!;
  return { key, fingerprint: requestFingerprint(request.method, path, request.body ?? null) };
}
