/**
 * What the code-host API doubles (github-api.ts, gitlab-api.ts, gitea-api.ts)
 * share: a `node:http` server on 127.0.0.1, the record of every request, and
 * scripted answers that take precedence over the double's own behaviour.
 *
 *   double.failNext(502);                                   // the next request answers 502
 *   double.failNext(429, { 'retry-after': '0' });
 *   double.answerNext({ method: 'GET', path: /\/pulls$/ }, { status: 200, body: [] });
 *   const held = double.hold({ method: 'POST', path: /\/pulls$/ }, 'after'); // acted on, answer withheld
 *   await held.request; …; held.release();
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HostRequest {
  /** For a streamed answer: how much of it was written before the client stopped reading, and whether all was. */
  sent?: { bytes: number; complete: boolean };
  method: string;
  /** The path as sent (percent-escapes kept), without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, the raw text when it is not JSON, or undefined when there was no body. */
  body: unknown;
  rawBody: string;
}

export interface HostAnswer {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as text (`text/plain` unless the headers say otherwise), piece by piece as the client reads. */
  text?: Iterable<string>;
}

export interface RequestMatch {
  method?: string;
  /** A substring of the path, or a pattern it must match. */
  path?: string | RegExp;
}

interface Scripted {
  match: RequestMatch;
  answer: HostAnswer;
}

/** A request stopped on its way: before the double acts on it, or after (the answer is withheld). */
export interface Held {
  /** Resolves with the request once one matching arrives. */
  request: Promise<HostRequest>;
  /** Lets it (and any later one) through. */
  release(): void;
}

interface Holding {
  match: RequestMatch;
  phase: 'before' | 'after';
  arrived(request: HostRequest): void;
  released: Promise<void>;
}

export interface HostDoubleServer {
  /** `http://127.0.0.1:port`. */
  origin: string;
  requests: HostRequest[];
  /** The next request (matching `match`, if given) answers `status` with the host's error body. */
  failNext(status: number, headers?: Record<string, string>, match?: RequestMatch): void;
  /** The next request matching `match` gets `answer` instead of the double's own. */
  answerNext(match: RequestMatch, answer: HostAnswer): void;
  /**
   * Holds the next request matching `match` until released: `before` the double acts on it
   * (as if the network dropped it), or `after` (the host has acted, the client never hears).
   */
  hold(match: RequestMatch, phase: 'before' | 'after'): Held;
  close(): Promise<void>;
}

export interface HostDoubleOptions {
  /** The host's error envelope for a status (used by `failNext`). */
  errorBody(status: number): unknown;
  /** Runs before scripted answers, e.g. to validate the request; an answer stops there. */
  inspect?(request: HostRequest): HostAnswer | undefined;
  /** Headers every answer carries (rate-limit counters…). */
  commonHeaders?(): Record<string, string>;
  /** Sees each answer of `handle` (not scripted ones) before it is sent, e.g. to check its shape. */
  checkAnswer?(request: HostRequest, answer: HostAnswer): void;
}

const matches = (match: RequestMatch, request: HostRequest) =>
  (match.method === undefined || match.method.toUpperCase() === request.method) &&
  (match.path === undefined ||
    (typeof match.path === 'string' ? request.path.includes(match.path) : match.path.test(request.path)));

export async function startHostDouble(
  handle: (request: HostRequest) => HostAnswer | Promise<HostAnswer>,
  options: HostDoubleOptions,
): Promise<HostDoubleServer> {
  const requests: HostRequest[] = [];
  const scripted: Scripted[] = [];
  const holdings: Holding[] = [];

  /** Waits while a holding for `phase` matches `request` (each holding catches one request). */
  async function waitIfHeld(request: HostRequest, phase: Holding['phase']): Promise<void> {
    const index = holdings.findIndex((h) => h.phase === phase && matches(h.match, request));
    if (index < 0) return;
    const [holding] = holdings.splice(index, 1);
    holding!.arrived(request);
    await holding!.released;
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    if (rawBody !== '') {
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
    }
    const url = new URL(req.url ?? '/', 'http://double');
    const request: HostRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      rawBody,
    };
    requests.push(request);
    await waitIfHeld(request, 'before');
    // A client that died while its request was held never reached the host.
    if (res.destroyed || req.socket.destroyed) return;
    let answer: HostAnswer;
    try {
      answer = options.inspect?.(request) ?? (await nextScripted(request)) ?? (await ownAnswer(request));
    } catch (error) {
      answer = { status: 500, body: { message: `double failed: ${(error as Error).stack}` } };
    }
    await waitIfHeld(request, 'after');
    if (res.destroyed) return;
    const headers: Record<string, string> = { ...options.commonHeaders?.(), ...answer.headers };
    if (answer.text !== undefined) {
      headers['content-type'] ??= 'text/plain; charset=utf-8';
      res.writeHead(answer.status, headers);
      await writeText(res, answer.text, request);
      return;
    }
    if (answer.body !== undefined) headers['content-type'] ??= 'application/json; charset=utf-8';
    res.writeHead(answer.status, headers);
    res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
  });

  /** Writes `text` as the client takes it (waiting for each drain), stopping when the client goes. */
  async function writeText(res: ServerResponse, text: Iterable<string>, request: HostRequest) {
    const sent = { bytes: 0, complete: false };
    request.sent = sent;
    for (const piece of text) {
      if (res.destroyed) return;
      const more = res.write(piece);
      sent.bytes += Buffer.byteLength(piece);
      if (!more) {
        const gone = await new Promise<boolean>((resolve) => {
          res.once('drain', () => resolve(false));
          res.once('close', () => resolve(true));
        });
        if (gone) return;
      }
    }
    sent.complete = true;
    res.end();
  }

  async function ownAnswer(request: HostRequest): Promise<HostAnswer> {
    const answer = await handle(request);
    options.checkAnswer?.(request, answer);
    return answer;
  }

  async function nextScripted(request: HostRequest): Promise<HostAnswer | undefined> {
    const index = scripted.findIndex((s) => matches(s.match, request));
    if (index < 0) return undefined;
    const [entry] = scripted.splice(index, 1);
    return entry?.answer;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    failNext(status, headers = {}, match = {}) {
      scripted.push({ match, answer: { status, headers, body: options.errorBody(status) } });
    },
    answerNext(match, answer) {
      scripted.push({ match, answer });
    },
    hold(match, phase) {
      let arrived!: (request: HostRequest) => void;
      let release!: () => void;
      const request = new Promise<HostRequest>((resolve) => {
        arrived = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      holdings.push({ match, phase, arrived, released });
      return { request, release };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The bearer/token credential of a request, by scheme (lower-cased), or undefined. */
export function authorization(request: HostRequest): { scheme: string; credential: string } | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space < 0) return undefined;
  return { scheme: header.slice(0, space).toLowerCase(), credential: header.slice(space + 1).trim() };
}

/** A page of `items` with 1-based `page` and `perPage`. */
export function paginate<T>(items: T[], page: number, perPage: number): T[] {
  const start = (Math.max(1, page) - 1) * perPage;
  return items.slice(start, start + perPage);
}
