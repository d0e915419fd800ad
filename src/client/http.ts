/**
 * One HTTP exchange with the API: URL, bearer key, JSON body, a time limit per attempt, and the
 * bounded retries of retry.ts. Every failure leaves here as a `DocwrightApiError` (or, when the
 * caller aborted, as the abort reason), with the API key scrubbed from every message.
 */
import { DocwrightApiError, errorFromResponse, networkError } from './errors.ts';
import { isRetryableRequest, type RetryPolicy, withClientRetries } from './retry.ts';

export interface TransportOptions {
  /** Absolute http(s) URL; a trailing slash is ignored, a path prefix kept. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; scrubbed from every error. */
  apiKey: string;
  /** The fetch that sends each attempt. */
  fetch: typeof fetch;
  /** Per attempt: until the body is read, or for streams until the headers arrive. */
  timeoutMs: number;
  /** When a failed attempt is sent again. */
  retry: RetryPolicy;
}

export interface ApiRequest {
  /** The API uses no other methods (PATCH and DELETE: automations). */
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path under the base URL, segments already encoded. */
  path: string;
  /** Query parameters; undefined ones are left out. */
  query?: Record<string, string | number | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as `Idempotency-Key`; makes a POST retryable. */
  idempotencyKey?: string | undefined;
  /** Safe to repeat by the API's contract even as a POST (archive). */
  idempotent?: boolean;
  /** Aborts the request and its retries. */
  signal?: AbortSignal | undefined;
  /** Extra request headers (`Accept`, `Last-Event-ID`). */
  headers?: Record<string, string>;
}

export type Transport = ReturnType<typeof createTransport>;

export function createTransport(options: TransportOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');

  function urlOf(request: ApiRequest): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const query = params.size > 0 ? `?${params}` : '';
    return `${base}${request.path}${query}`;
  }

  /**
   * One attempt. With `stream` it returns as soon as a 2xx response's headers are in, its
   * body left to the caller (and still tied to the caller's signal), the time limit lifted.
   */
  async function attempt(
    request: ApiRequest,
    stream: boolean,
  ): Promise<{ response: Response; body: unknown }> {
    const label = `${request.method} ${request.path}`;
    const signal = request.signal;
    if (signal?.aborted) throw signal.reason;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException('the request timed out', 'TimeoutError'));
    }, options.timeoutMs);
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const failure = (error: unknown) =>
      signal?.aborted ? signal.reason : networkError(error, label, options.apiKey, timedOut);
    let handedOver = false;
    try {
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...request.headers,
        authorization: `Bearer ${options.apiKey}`,
      };
      if (request.body !== undefined) headers['content-type'] = 'application/json';
      if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
      let response: Response;
      try {
        response = await options.fetch(urlOf(request), {
          method: request.method,
          headers,
          body: request.body === undefined ? undefined : JSON.stringify(request.body),
          signal: controller.signal,
        });
      } catch (error) {
        throw failure(error);
      }
      if (!response.ok) {
        const error = await errorFromResponse(response, label, options.apiKey);
        throw signal?.aborted ? signal.reason : error;
      }
      if (stream) {
        handedOver = true;
        return { response, body: undefined };
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw failure(error);
      }
      try {
        return { response, body: text === '' ? null : JSON.parse(text) };
      } catch (cause) {
        throw new DocwrightApiError({
          status: response.status,
          code: 'invalid-response',
          title: 'Invalid response',
          detail: 'the response body is not JSON',
          request: label,
          cause,
        });
      }
    } finally {
      clearTimeout(timer);
      if (!handedOver) signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Attempts `request`, retrying it as far as its kind and the policy allow. */
  function send(request: ApiRequest, stream: boolean) {
    return withClientRetries(() => attempt(request, stream), {
      policy: options.retry,
      repeatable: isRetryableRequest(request.method, request.idempotent ?? false, request.idempotencyKey),
      signal: request.signal,
    });
  }

  return {
    /**
     * The parsed JSON body of a 2xx response, as the type the OpenAPI document gives the route
     * (src/client/types.ts): the one place the client's wire JSON takes a type.
     */
    async json<T>(request: ApiRequest): Promise<T> {
      return (await send(request, false)).body as T;
    },
    /** A 2xx response whose body the caller reads (an event stream). */
    async open(request: ApiRequest): Promise<Response> {
      return (await send(request, true)).response;
    },
  };
}
