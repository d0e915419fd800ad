/**
 * `POST /hooks/{projectId}/{name}` (docs/automations.mdx, "Events in"): a code host's webhook for the
 * project's repository `name` (a context repository, or `docs`). This endpoint faces the
 * internet, so an unauthenticated request costs no more than a signature check: what the headers
 * alone condemn is refused before the body is read, the body is read raw and bounded
 * (`MAX_EVENT_BODY_BYTES`), its signature checked over those bytes, and only then is anything
 * parsed or stored. A verified delivery is stored (once per delivery id: a redelivery stores
 * nothing) and answered 202 at once; the background loop processes it (worker/automation-loop.ts).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import type { HookHost } from '../automations/code-events.ts';
import { MAX_EVENT_BODY_BYTES } from '../automations/host-events.ts';
import { DocwrightError } from '../errors.ts';
import { bodyTooLarge } from '../http/problem.ts';
import { deliveryIdOf, eventOf } from './deliveries.ts';
import { type HeaderSource, headerValue } from './headers.ts';
import { checkBeforeBody, verifySignature } from './signatures.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'automations'>;

type HookParams = { Params: { projectId: string; name: string } };

declare module 'fastify' {
  interface FastifyRequest {
    /** `known`: whether the URL names a repository with a secret (else `secret` is nobody's). */
    hookVerifier: { secret: string; host: HookHost; known: boolean } | null;
  }
}

/**
 * What a URL without a secret (no such project or repository) is checked with: a random secret
 * nobody knows, so that such a request is refused where and as a wrong signature is — after its
 * body is read, or with 413 — and its answer cannot tell the URL apart from one that exists.
 */
const NOBODYS_SECRET = randomBytes(32).toString('hex');
const NO_SUCH_URL = 'no such project or repository, or it has no secret';

/** The host a delivery is from when the repository's does not say (a local repository): its event header. */
function sniffHost(headers: HeaderSource): HookHost {
  if (
    headerValue(headers, 'X-Gitea-Event') !== undefined ||
    headerValue(headers, 'X-Forgejo-Event') !== undefined
  ) {
    return 'gitea';
  }
  return headerValue(headers, 'X-Gitlab-Event') !== undefined ? 'gitlab' : 'github';
}

/**
 * The one answer to every request that is not signed for its URL (docs/automations.mdx): the
 * same status and body whether the project or the repository does not exist, has no secret, or
 * the signature is missing, malformed, meant for another host or wrong, so that nobody learns
 * without the secret which projects and repositories exist or which host they use.
 */
export const HOOK_REFUSED_MESSAGE = 'webhook refused: the request is not signed with this URL’s secret';

/** The refusal, with its real reason in the server log (never a secret: the reasons name headers only). */
function refusal(request: FastifyRequest<HookParams>, reason: string): DocwrightError {
  const { projectId, name } = request.params;
  request.log.warn({ projectId, name, reason }, 'webhook refused');
  return new DocwrightError('unauthorized', HOOK_REFUSED_MESSAGE);
}

export function registerHookRoutes(server: FastifyInstance, app: AppUses): void {
  server.register(async (scope) => {
    // Who signs for the request's URL, found before its body is read (onRequest below).
    scope.decorateRequest('hookVerifier', null);
    // Bodies are taken as bytes, whatever their type: the signature covers them as received.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: MAX_EVENT_BODY_BYTES },
      (_r, body, done) => done(null, body),
    );

    scope.post<HookParams>(
      '/hooks/:projectId/:name',
      {
        bodyLimit: MAX_EVENT_BODY_BYTES,
        // Before the body is read: who signs for this URL, and what the headers alone refuse.
        onRequest: async (request) => {
          // Before the URL is looked up: a 413 here must not tell a known URL from an unknown one.
          if (Number(request.headers['content-length']) > MAX_EVENT_BODY_BYTES) {
            throw bodyTooLarge(MAX_EVENT_BODY_BYTES);
          }
          const { projectId, name } = request.params;
          const found = await app.automations.deliveries.verifierFor(projectId, name);
          const host = found?.host ?? sniffHost(request.headers);
          const secret = found?.secret ?? NOBODYS_SECRET;
          const early = checkBeforeBody(host, request.headers, secret);
          if (early !== null && !early.ok) throw refusal(request, found ? early.message : NO_SUCH_URL);
          request.hookVerifier = { secret, host, known: found !== undefined };
        },
      },
      async (request, reply) => {
        const verifier = request.hookVerifier!;
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const check = verifySignature(verifier.host, request.headers, body, verifier.secret);
        // Nobody's secret verifies nothing, but the check runs for unknown URLs too: the same cost.
        if (!verifier.known) throw refusal(request, NO_SUCH_URL);
        if (!check.ok) throw refusal(request, check.message);
        const event = eventOf(verifier.host, request.headers);
        if (event === 'ping') return reply.status(200).send({ received: true, event });
        const { projectId, name } = request.params;
        const stored = await app.automations.deliveries.store({
          projectId,
          name,
          deliveryId: deliveryIdOf(verifier.host, request.headers, body),
          host: verifier.host,
          event,
          contentType: request.headers['content-type'] ?? null,
          body,
        });
        if (stored) app.automations.deliveryStored();
        return reply.status(202).send({ received: true, event, duplicate: !stored });
      },
    );
  });
}
