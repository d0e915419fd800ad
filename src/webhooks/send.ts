/**
 * One webhook POST: no redirects followed, a time limit on the whole exchange, the egress
 * guard on the address actually connected to, and only the start of the answer read.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseRetryAfter } from '../retry.ts';
import { checkUrlHost, guardedLookup } from './egress.ts';

/** What the receiver answered. */
export interface WebhookAnswer {
  statusCode: number;
  /** `Retry-After`, in ms, when the answer carried one. */
  retryAfterMs: number | undefined;
  /** `Location` of a redirect, which is reported but not followed. */
  location: string | undefined;
  /** The start of the body (at most `RESPONSE_KEPT_BYTES`), as text. */
  body: string;
}

export interface SendOptions {
  /** The whole exchange, connection to last byte read (docs/webhooks.mdx: 15 s). */
  timeoutMs: number;
  /** Skip the egress guard (`DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1`). */
  allowPrivate: boolean;
  /** Aborts the request (shutdown). */
  signal?: AbortSignal;
}

/** How much of an answer is kept for the delivery history. */
export const RESPONSE_KEPT_BYTES = 1024;
/** How much of an answer is read at all; the rest is dropped with the connection. */
const RESPONSE_READ_BYTES = 64 * 1024;

/**
 * POSTs `body` to `url`. Resolves with any HTTP answer (the caller judges its status); rejects
 * with an error whose message is fit for the delivery history when no answer came (refused
 * destination, DNS, connection, time limit).
 */
export async function postWebhook(
  url: URL,
  body: string,
  headers: Record<string, string>,
  options: SendOptions,
): Promise<WebhookAnswer> {
  if (!options.allowPrivate) checkUrlHost(url);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, answer?: WebhookAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(answer!);
    };
    const req = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      // A fresh connection per attempt: each one resolves, and is checked, anew.
      agent: false,
      ...(options.allowPrivate ? {} : { lookup: guardedLookup }),
    });
    const stop = (error: Error) => {
      finish(error);
      req.destroy(error);
    };
    const timer = setTimeout(
      () => stop(new Error(`no answer within ${Math.round(options.timeoutMs / 1000)} s`)),
      options.timeoutMs,
    );
    const onAbort = () => stop(new Error('the delivery was interrupted (shutdown)'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error) => finish(describeNetworkError(error, url)));
    req.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => {
        const text = Buffer.concat(chunks).subarray(0, RESPONSE_KEPT_BYTES).toString('utf8');
        finish(undefined, {
          statusCode: response.statusCode ?? 0,
          retryAfterMs: parseRetryAfter(header(response, 'retry-after')),
          location: header(response, 'location'),
          body: text,
        });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        if (read < RESPONSE_KEPT_BYTES) chunks.push(chunk);
        read += chunk.length;
        if (read >= RESPONSE_READ_BYTES) done();
      });
      response.on('end', done);
      response.on('error', (error) => finish(describeNetworkError(error, url)));
    });
    req.end(body);
  });
}

const header = (response: IncomingMessage, name: string): string | undefined => {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** A network failure as one line that names the cause without the request's internals. */
function describeNetworkError(error: Error & { code?: string }, url: URL): Error {
  if (error.name === 'EgressRefused' || !error.code) return error;
  const where = url.host;
  const messages: Record<string, string> = {
    ECONNREFUSED: `${where} refused the connection`,
    ECONNRESET: `${where} closed the connection`,
    ENOTFOUND: `${url.hostname} does not resolve`,
    EAI_AGAIN: `${url.hostname} could not be resolved (temporary DNS failure)`,
    ETIMEDOUT: `connecting to ${where} timed out`,
    EHOSTUNREACH: `${where} is unreachable`,
    ENETUNREACH: `${where} is unreachable`,
    CERT_HAS_EXPIRED: `${where} presented an expired TLS certificate`,
    DEPTH_ZERO_SELF_SIGNED_CERT: `${where} presented a self-signed TLS certificate`,
  };
  return new Error(messages[error.code] ?? `${error.code}: ${error.message}`);
}
