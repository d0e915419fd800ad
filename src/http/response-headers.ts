/**
 * Headers of every response, whoever writes it (Fastify, a hijacked event stream, a raw socket).
 * `nosniff`: a browser reads each body as its declared type only, never as HTML, however much a
 * diff or a transcript of model-written text looks like it.
 */
export const COMMON_HEADERS = { 'x-content-type-options': 'nosniff' } as const;
