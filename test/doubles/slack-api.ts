/**
 * Slack's Web API on loopback, speaking its wire protocol: `POST /api/<method>` with a form or JSON
 * body and the bot token as `Authorization: Bearer` (or a `token` field), answered HTTP 200 with
 * `{"ok": true, …}` or `{"ok": false, "error": "…"}` (429 with `Retry-After` when told to rate
 * limit). It knows `auth.test`, `chat.postMessage`, `chat.update` and `users.info`, keeps the
 * messages posted (and each one's edits), and records every call. Also: how Slack signs the
 * requests it sends (v0), for tests that play Slack calling docwright.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackCall {
  method: string;
  /** The body's fields (form or JSON). */
  args: Record<string, unknown>;
  contentType: string;
  authorization: string | undefined;
}

export interface SlackMessage {
  channel: string;
  ts: string;
  threadTs: string | undefined;
  /** The current text. */
  text: string;
  /** Every text it had, first to last. */
  versions: string[];
}

export interface SlackUserRecord {
  id: string;
  is_admin?: boolean;
  is_owner?: boolean;
  is_bot?: boolean;
}

export interface SlackApiDouble {
  /** The value for `DOCWRIGHT_SLACK_API_URL` (ends with `/api/`). */
  apiUrl: string;
  token: string;
  botUserId: string;
  calls: SlackCall[];
  messages: SlackMessage[];
  /** The messages posted in `channel`'s thread `threadTs`. */
  thread(channel: string, threadTs: string): SlackMessage[];
  addUser(user: SlackUserRecord): void;
  /** The next call of `method` answers `{"ok": false, "error": error}` (or 429 with `rate_limited`). */
  failNext(method: string, error: string): void;
  /** Delays every answer by `ms` (a slow Slack). */
  delay(ms: number): void;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseArgs(contentType: string, body: string): Record<string, unknown> {
  if (contentType.startsWith('application/json'))
    return (JSON.parse(body || '{}') as Record<string, unknown>) ?? {};
  return Object.fromEntries(new URLSearchParams(body));
}

export async function startSlackApi(
  options: { token?: string; botUserId?: string } = {},
): Promise<SlackApiDouble> {
  const token = options.token ?? 'xoxb-test-0123456789-abcdefghijklmnop';
  const botUserId = options.botUserId ?? 'UBOT0DOCW';
  const calls: SlackCall[] = [];
  const messages: SlackMessage[] = [];
  const users = new Map<string, SlackUserRecord>();
  const failures: { method: string; error: string }[] = [];
  let delayMs = 0;
  let clock = 1_700_000_000;

  const methods: Record<string, (args: Record<string, unknown>) => Record<string, unknown>> = {
    'auth.test': () => ({
      ok: true,
      url: 'https://acme.slack.test/',
      team: 'Acme',
      user: 'docwright',
      team_id: 'T0ACME',
      user_id: botUserId,
      bot_id: 'B0DOCW',
    }),
    'chat.postMessage': (args) => {
      const channel = String(args.channel ?? '');
      const text = String(args.text ?? '');
      if (!channel) return { ok: false, error: 'channel_not_found' };
      if (!text) return { ok: false, error: 'no_text' };
      const ts = `${clock++}.000100`;
      const threadTs = args.thread_ts === undefined ? undefined : String(args.thread_ts);
      messages.push({ channel, ts, threadTs, text, versions: [text] });
      return { ok: true, channel, ts, message: { text, ts, thread_ts: threadTs, user: botUserId } };
    },
    'chat.update': (args) => {
      const message = messages.find((m) => m.channel === args.channel && m.ts === args.ts);
      if (!message) return { ok: false, error: 'message_not_found' };
      message.text = String(args.text ?? '');
      message.versions.push(message.text);
      return { ok: true, channel: message.channel, ts: message.ts, text: message.text };
    },
    'users.info': (args) => {
      const user = users.get(String(args.user ?? ''));
      if (!user) return { ok: false, error: 'user_not_found' };
      return {
        ok: true,
        user: { is_admin: false, is_owner: false, is_bot: false, name: user.id.toLowerCase(), ...user },
      };
    },
  };

  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const contentType = String(request.headers['content-type'] ?? '');
    const method = (request.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
    let args: Record<string, unknown>;
    try {
      args = parseArgs(contentType, body);
    } catch {
      args = {};
    }
    const authorization = request.headers.authorization;
    calls.push({ method, args, contentType, authorization });
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(JSON.stringify(value));
    };
    if (request.method !== 'POST' || !request.url?.startsWith('/api/'))
      return send(404, { ok: false, error: 'unknown_method' });
    const given = authorization?.replace(/^Bearer /, '') ?? (args.token as string | undefined);
    if (given === undefined) return send(200, { ok: false, error: 'not_authed' });
    if (given !== token) return send(200, { ok: false, error: 'invalid_auth' });
    const failure = failures.findIndex((f) => f.method === method);
    if (failure !== -1) {
      const { error } = failures.splice(failure, 1)[0]!;
      if (error === 'rate_limited') return send(429, { ok: false, error }, { 'retry-after': '1' });
      return send(200, { ok: false, error });
    }
    const handler = methods[method];
    if (!handler) return send(200, { ok: false, error: 'unknown_method' });
    return send(200, handler(args));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    token,
    botUserId,
    calls,
    messages,
    thread: (channel, threadTs) => messages.filter((m) => m.channel === channel && m.threadTs === threadTs),
    addUser: (user) => users.set(user.id, user),
    failNext: (method, error) => failures.push({ method, error }),
    delay: (ms) => {
      delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The headers Slack sends with `body`, signed with `secret` at `timestamp` (seconds; default now). */
export function signSlackRequest(
  secret: string,
  body: string,
  timestamp = Math.floor(Date.now() / 1000),
): { 'x-slack-request-timestamp': string; 'x-slack-signature': string } {
  const signature = createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
  return { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': `v0=${signature}` };
}

/** An `event_callback` envelope of an `app_mention`, as Slack sends it. */
export function appMention(input: {
  eventId: string;
  channel: string;
  user?: string;
  text: string;
  ts: string;
  threadTs?: string;
  botUserId?: string;
  botId?: string;
}): Record<string, unknown> {
  return {
    token: 'deprecated-verification-token',
    team_id: 'T0ACME',
    api_app_id: 'A0DOCW',
    type: 'event_callback',
    event_id: input.eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      { enterprise_id: null, team_id: 'T0ACME', user_id: input.botUserId ?? 'UBOT0DOCW', is_bot: true },
    ],
    event: {
      type: 'app_mention',
      user: input.user ?? 'U0ALICE',
      text: input.text,
      ts: input.ts,
      ...(input.threadTs && { thread_ts: input.threadTs }),
      ...(input.botId && { bot_id: input.botId }),
      channel: input.channel,
      event_ts: input.ts,
    },
  };
}
