/**
 * `POST /slack/events` and `POST /slack/commands` (docs/slack.mdx): Slack's requests in. Like the
 * code hosts' hooks these face the internet, so an unsigned request costs no more than a
 * signature check: the headers are checked before the body is read, the body is read raw and
 * bounded, its v0 signature checked over those bytes (five-minute window), and only then is
 * anything parsed or stored. An event is stored once per event id and acknowledged at once;
 * the background loop (src/worker/slack-loop.ts) acts on it. Without a signing secret these
 * routes answer 404, saying what to set.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { refusedHeaders, verifySlackSignature } from '../conversations/slack/signature.ts';
import { DocwrightError } from '../errors.ts';
import { bodyTooLarge } from '../http/problem.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'slack' | 'now'>;

/** Largest event envelope taken (Slack's are a few KiB). */
export const MAX_SLACK_EVENT_BYTES = 512 * 1024;
/** Largest slash command body taken (form fields; the text is at most 4,000 characters). */
export const MAX_SLACK_COMMAND_BYTES = 64 * 1024;

export const SLACK_REFUSED_MESSAGE = 'Slack request refused: it is not signed with this app’s signing secret';
const NOT_SET_UP =
  'Slack is not set up on this server: set DOCWRIGHT_SLACK_SIGNING_SECRET and DOCWRIGHT_SLACK_BOT_TOKEN (see the Slack page of the docs)';
const EVENT_ID = /^[A-Za-z0-9_-]{1,100}$/;

const header = (request: FastifyRequest, name: string) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
};

function refusal(request: FastifyRequest, reason: string): DocwrightError {
  request.log.warn({ route: request.url.split('?')[0], reason }, 'Slack request refused');
  return new DocwrightError('unauthorized', SLACK_REFUSED_MESSAGE);
}

/** The onRequest check both routes share: set up, not too large, headers that can verify. */
function checkBeforeBody(app: AppUses, limit: number) {
  return async (request: FastifyRequest) => {
    if (!app.slack.configured) throw new DocwrightError('not-found', NOT_SET_UP);
    if (Number(request.headers['content-length']) > limit) throw bodyTooLarge(limit);
    const refused = refusedHeaders(
      {
        timestamp: header(request, 'x-slack-request-timestamp'),
        signature: header(request, 'x-slack-signature'),
      },
      app.now(),
    );
    if (refused) throw refusal(request, refused);
  };
}

/** The raw body, once its signature is verified. */
function verifiedBody(app: AppUses, request: FastifyRequest): Buffer {
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const check = verifySlackSignature(
    app.config.slack.signingSecret!,
    {
      timestamp: header(request, 'x-slack-request-timestamp'),
      signature: header(request, 'x-slack-signature'),
      body,
    },
    app.now(),
  );
  if (!check.ok) throw refusal(request, check.reason);
  return body;
}

function parseEnvelope(body: Buffer): Record<string, unknown> {
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new DocwrightError('invalid-json', 'the Slack event is not a JSON object');
}

export function registerSlackRoutes(server: FastifyInstance, app: AppUses): void {
  server.register(async (scope) => {
    // Bodies are taken as bytes, whatever their type: the signature covers them as received.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: MAX_SLACK_EVENT_BYTES },
      (_r, body, done) => done(null, body),
    );

    scope.post(
      '/slack/events',
      { bodyLimit: MAX_SLACK_EVENT_BYTES, onRequest: checkBeforeBody(app, MAX_SLACK_EVENT_BYTES) },
      async (request, reply) => {
        const body = verifiedBody(app, request);
        const envelope = parseEnvelope(body);
        if (envelope.type === 'url_verification') {
          return reply.status(200).send({ challenge: String(envelope.challenge ?? '').slice(0, 200) });
        }
        const eventId = envelope.event_id;
        if (envelope.type !== 'event_callback' || typeof eventId !== 'string' || !EVENT_ID.test(eventId)) {
          // Nothing docwright acts on (app_rate_limited…): acknowledged, so that Slack does not retry.
          return reply.status(200).send({ ok: true });
        }
        const inner = envelope.event as { type?: unknown } | undefined;
        const stored = await app.slack.events.store({
          eventId,
          eventType: typeof inner?.type === 'string' ? inner.type.slice(0, 100) : null,
          body: body.toString('utf8'),
        });
        if (stored) app.slack.eventStored();
        return reply.status(200).send({ ok: true, duplicate: !stored });
      },
    );

    scope.post(
      '/slack/commands',
      { bodyLimit: MAX_SLACK_COMMAND_BYTES, onRequest: checkBeforeBody(app, MAX_SLACK_COMMAND_BYTES) },
      async (request, reply) => {
        const body = verifiedBody(app, request);
        const form = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
        return reply.status(200).send(await app.slack.answerCommand(form));
      },
    );
  });
}
