import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { PROBLEM_CONTENT_TYPE, type Problem } from '../../src/http/problem.ts';
import { isJobId } from '../../src/ids.ts';
import { JOB_STATUSES } from '../../src/jobs/agent-job.ts';
import { createJobBody } from '../../src/jobs/requests.ts';
import { checksum } from '../../src/keys/key-format.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Robustness of the HTTP API (docs/api/overview.mdx, docs/api/authentication.mdx, docs/api/errors.mdx): thousands of generated
 * malformed requests, written byte by byte onto raw TCP sockets, each get a
 * 4xx problem+json answer, and the server stays healthy afterwards.
 *
 * Every generated request is a client error by construction: create and
 * follow-up bodies are never valid (checked against the product's own schema),
 * list and events queries always carry an invalid parameter, and the job id
 * of a read or an archive never names an existing job. So no request creates
 * anything or uses the rate limit, which the end of the test checks.
 */

/** Generated requests; each is one connection. */
const RUNS = 2500;
/** A request that gets no complete answer within this time counts as a hung connection. */
const ANSWER_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------
// Raw HTTP/1.1 over node:net

interface RawRequest {
  method: string;
  target: string;
  /** Written as latin1, so that a value can carry any byte but CR and LF. */
  headers: [string, string][];
  body?: Buffer | undefined;
  /** Send the body with `Transfer-Encoding: chunked` in chunks of this size instead of Content-Length. */
  chunkSize?: number | undefined;
  /** Leave out the Host header. */
  noHost?: boolean;
  /** The protocol of the request line; HTTP/1.1 by default. */
  version?: string | undefined;
}

interface RawResponse {
  status: number;
  /** Lower-case names; every value a header had, in order. */
  headers: Record<string, string[]>;
  body: Buffer;
}

function encodeRequest(request: RawRequest): Buffer {
  const lines = [`${request.method} ${request.target} ${request.version ?? 'HTTP/1.1'}`];
  if (!request.noHost) lines.push('Host: 127.0.0.1');
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  let body: Buffer = Buffer.alloc(0);
  if (request.body !== undefined && request.chunkSize) {
    lines.push('Transfer-Encoding: chunked');
    const parts: Buffer[] = [];
    for (let at = 0; at < request.body.length; at += request.chunkSize) {
      const chunk = request.body.subarray(at, at + request.chunkSize);
      parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
    }
    body = Buffer.concat([...parts, Buffer.from('0\r\n\r\n')]);
  } else if (request.body !== undefined) {
    lines.push(`Content-Length: ${request.body.length}`);
    body = request.body;
  }
  lines.push('Connection: close', '', '');
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]);
}

function decodeChunked(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    assert.ok(lineEnd >= 0, 'truncated chunked body');
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    assert.ok(Number.isInteger(size), 'malformed chunk size');
    if (size === 0) return Buffer.concat(parts);
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** Parses the final response of a connection, skipping interim 1xx responses (100 Continue). */
function parseResponse(data: Buffer): RawResponse {
  let rest = data;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    assert.ok(
      headEnd >= 0,
      `no complete response head in ${JSON.stringify(rest.toString('latin1').slice(0, 300))}`,
    );
    const [statusLine = '', ...lines] = rest.subarray(0, headEnd).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3}) /.exec(`${statusLine} `);
    assert.ok(match, `malformed status line ${JSON.stringify(statusLine)}`);
    const status = Number(match[1]);
    const headers: Record<string, string[]> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      headers[name] = [...(headers[name] ?? []), line.slice(colon + 1).trim()];
    }
    rest = rest.subarray(headEnd + 4);
    if (status < 200) continue;
    if (headers['transfer-encoding']?.[0]?.toLowerCase() === 'chunked') {
      return { status, headers, body: decodeChunked(rest) };
    }
    const length = headers['content-length'];
    assert.ok(length?.length === 1, 'the response has neither one Content-Length nor chunked encoding');
    assert.ok(rest.length >= Number(length[0]), `the body is shorter than its Content-Length ${length[0]}`);
    return { status, headers, body: rest.subarray(0, Number(length[0])) };
  }
}

/** Sends one request on a fresh connection and reads until the server closes it. */
function exchange(port: number, request: RawRequest | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let failure: Error | undefined;
    let hung = false;
    // An answer counts only once the server has closed the connection, as `Connection: close` asks.
    socket.setTimeout(ANSWER_TIMEOUT_MS, () => {
      hung = true;
      socket.destroy();
    });
    socket.on('data', (chunk) => received.push(chunk));
    // The server may answer (413…) and close before it has read the whole
    // request; the write error that follows is expected, the answer counts.
    socket.on('error', (error) => {
      failure ??= error;
    });
    socket.on('close', () => {
      if (hung) return reject(new Error(`the connection was still open after ${ANSWER_TIMEOUT_MS} ms`));
      try {
        resolve(parseResponse(Buffer.concat(received)));
      } catch (error) {
        reject(failure ? new Error(`${(error as Error).message} (socket: ${failure.message})`) : error);
      }
    });
    socket.write(Buffer.isBuffer(request) ? request : encodeRequest(request));
  });
}

/** A one-line description of a request for assertion messages. */
function describeRequest(request: RawRequest): string {
  const body = request.body
    ? ` body(${request.body.length}${request.chunkSize ? ` chunked/${request.chunkSize}` : ''})=${JSON.stringify(request.body.subarray(0, 80).toString('latin1'))}`
    : '';
  const headers = request.headers.map(([n, v]) => `${n}: ${v.slice(0, 60)}`).join(' | ');
  const version = request.version ? ` ${request.version}` : '';
  return `${request.method} ${request.target.slice(0, 200)}${version}${request.noHost ? ' (no Host)' : ''} [${headers}]${body}`;
}

/** docs/api/errors.mdx: a 4xx application/problem+json with every field, `status` equal to the HTTP status. */
function assertClientProblem(response: RawResponse, label: string, secrets: string[]): Problem {
  assert.ok(response.status >= 400 && response.status < 500, `status ${response.status} for ${label}`);
  assert.deepEqual(response.headers['content-type'], [PROBLEM_CONTENT_TYPE], `content-type for ${label}`);
  const text = response.body.toString('utf8');
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(text);
  } catch {
    assert.fail(`the body is not JSON for ${label}: ${JSON.stringify(text.slice(0, 200))}`);
  }
  for (const field of ['type', 'title', 'detail', 'code', 'error']) {
    assert.equal(typeof problem[field], 'string', `${field} for ${label}`);
  }
  assert.equal(problem.status, response.status, `status field for ${label}`);
  for (const secret of secrets) assert.ok(!text.includes(secret), `a key leaked into the answer to ${label}`);
  assert.doesNotMatch(text, /\n\s+at |node_modules|SQLITE_|\bselect\b.*\bfrom\b/i, `internals in ${label}`);
  return problem as Problem;
}

// ---------------------------------------------------------------------------
// Generators

const ulid = fc.stringMatching(/^[0-9a-hjkmnp-tv-z]{26}$/);
const visibleAscii = (max: number) => fc.stringMatching(new RegExp(`^[!-~]{1,${max}}$`));

/** Percent-encodes bytes (valid UTF-8 or not), leaving unreserved ASCII as it is. */
const percentEncode = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9._~-]/.test(c) ? c : `%${b.toString(16).padStart(2, '0')}`;
  }).join('');

/** A path segment nobody would send on purpose. */
const oddSegment = fc.oneof(
  fc.constantFrom(
    '',
    '.',
    '..',
    '%',
    '%zz',
    '%2',
    '%c3%28',
    '%ff%fe',
    '%00',
    '%2F',
    '%2e%2e',
    'a%20b',
    'x;y=1',
    '*',
    '%E2%82',
    '%ED%A0%80',
    encodeURIComponent('ключ'),
  ),
  fc.uint8Array({ maxLength: 40 }).map(percentEncode),
  visibleAscii(30),
  fc.integer({ min: 400, max: 4000 }).map((n) => 'x'.repeat(n)),
);

/** `arbitrary` once in `n` draws, undefined otherwise. */
const oneIn = <T>(n: number, arbitrary: fc.Arbitrary<T>) =>
  fc.oneof({ weight: n - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

/**
 * Header values nobody would send: visible ASCII, obs-text (bytes 0x80–0xff,
 * which HTTP tolerates) and now and then control bytes, which the HTTP parser
 * refuses. Never CR or LF, which would end the header line.
 */
const headerGarbage = fc.oneof(
  { weight: 8, arbitrary: visibleAscii(60) },
  {
    weight: 4,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 60 })
      .map((bytes) =>
        Buffer.from(bytes.map((b) => (b < 0x20 || b === 0x7f ? b | 0x80 : b))).toString('latin1'),
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 60 })
      .map((bytes) => Buffer.from(bytes.filter((b) => b !== 10 && b !== 13)).toString('latin1')),
  },
);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset="utf-8"',
  'application/json;;',
  'application/json; charset',
  'Application/JSON',
  'application/problem+json',
  'application/vnd.api+json',
  'application/json-patch+json',
  'application/jsonx',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/octet-stream',
  '*/*',
  'application/*',
  'json',
  '',
  ';',
];

const BAD_LIMITS = [
  '0',
  '101',
  '-1',
  '1.5',
  'abc',
  '',
  '1e3',
  'NaN',
  'Infinity',
  '%zz',
  '99999999999999999999',
  '%20',
  '10abc',
];
const BAD_EVENT_LIMITS = ['0', '1001', '-3', '2.5', 'x', '', '1e9'];
const BAD_AFTERS = ['-1', 'x', '1.5', '1e400', '99999999999999999999', '9007199254740992', '%zz'];

const unknownParam = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'limit[]',
    'LIMIT',
    'Status',
    'page',
  ),
  fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_.-]{0,15}$/),
);

const queryValue = fc.oneof(fc.uint8Array({ maxLength: 30 }).map(percentEncode), visibleAscii(20));

/** A query string with at least one parameter that `known` rejects, plus noise. */
function badQuery(known: string[], faults: fc.Arbitrary<string>[], noise: fc.Arbitrary<string>[]) {
  const unknown = fc
    .tuple(
      unknownParam.filter((name) => !known.includes(name)),
      queryValue,
    )
    .map(([name, value]) => `${name}=${value}`);
  return fc
    .tuple(fc.oneof(unknown, ...faults), fc.array(fc.oneof(unknown, ...noise), { maxLength: 4 }))
    .chain(([fault, rest]) =>
      fc.shuffledSubarray([fault, ...rest], { minLength: rest.length + 1, maxLength: rest.length + 1 }),
    )
    .map((params) => `?${params.join('&')}`);
}

const listQuery = badQuery(
  ['status', 'limit', 'cursor'],
  [
    fc.constantFrom(...BAD_LIMITS).map((v) => `limit=${v}`),
    fc
      .oneof(
        fc.constantFrom('ACTIVE', 'done', '', 'active%20', 'active,failed', '%zz', 'null'),
        fc.stringMatching(/^[a-z]{1,10}$/),
      )
      .filter((s) => !(JOB_STATUSES as readonly string[]).includes(s))
      .map((s) => `status=${s}`),
    fc
      .oneof(fc.base64String({ minLength: 1, maxLength: 60 }), visibleAscii(40), fc.constant('a'.repeat(201)))
      .filter((c) => !isJobId(Buffer.from(c, 'base64url').toString()))
      .map((c) => `cursor=${encodeURIComponent(c)}`),
    fc.constantFrom('limit=1&limit=2', 'status=active&status=active', 'cursor=a&cursor=b'),
  ],
  [fc.constantFrom('limit=5', 'status=active', 'limit=100', '', '&')],
);

const eventsQuery = badQuery(
  ['after', 'limit'],
  [
    fc.constantFrom(...BAD_EVENT_LIMITS).map((v) => `limit=${v}`),
    fc.constantFrom(...BAD_AFTERS).map((v) => `after=${v}`),
    fc.constantFrom('after=1&after=2', 'limit=1&limit=1'),
  ],
  [fc.constantFrom('after=0', 'limit=10', '')],
);

/** Any query string, for routes that ignore it. */
const anyQuery = fc.oneof(
  fc.constant(''),
  fc.constant('?'),
  listQuery,
  eventsQuery,
  fc.array(queryValue, { maxLength: 4 }).map((values) => `?${values.join('&')}`),
);

/** Bodies for create and follow-up. The caller filters out valid ones. */
function bodyArbitrary() {
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }));
  const wrongTypes = fc
    .record(
      {
        prompt: fc.oneof(
          fc.integer(),
          fc.boolean(),
          fc.constant(null),
          fc.array(text, { maxLength: 3 }),
          fc.dictionary(text, text, { maxKeys: 3 }),
          fc.constantFrom('', '   ', '\n\t', '\u0000', 'x'.repeat(100_001)),
          text,
        ),
        ref: fc.oneof(
          fc.constantFrom('bad..ref', '-x', 'a b', '', '/main', 'x.lock', 'ma\u0000in'),
          fc.integer(),
          text,
        ),
        model: fc.oneof(
          fc.constantFrom('gpt', 'openai/', 'evil/model', 'openai/other'),
          fc.constant(7),
          text,
        ),
        draft: fc.oneof(fc.constantFrom('yes', 'true', 0, 1, null), text),
      },
      { requiredKeys: [] },
    )
    .map(json);
  const unknownFields = fc
    .tuple(text, fc.jsonValue({ maxDepth: 3 }), fc.boolean())
    .map(([key, value, withPrompt]) => json({ ...(withPrompt ? { prompt: 'ok' } : {}), [key]: value }));
  const deep = fc
    .tuple(
      fc.integer({ min: 1, max: 120_000 }),
      fc.constantFrom('[]', '{}', 'mixed'),
      fc.constantFrom('bare', 'prompt', 'extra'),
    )
    .map(([depth, shape, at]) => {
      const open = shape === '[]' ? '[' : shape === '{}' ? '{"a":' : '[{"a":';
      const close = shape === '[]' ? ']' : shape === '{}' ? '}' : '}]';
      const levels = shape === 'mixed' ? Math.ceil(depth / 2) : depth;
      const value = `${open.repeat(levels)}${shape === '[]' ? '' : '1'}${close.repeat(levels)}`;
      return Buffer.from(
        at === 'bare' ? value : at === 'prompt' ? `{"prompt":${value}}` : `{"prompt":"x","deep":${value}}`,
      );
    });
  const huge = fc
    .tuple(fc.integer({ min: 100_001, max: 300 * 1024 }), fc.constantFrom('x', 'é', '€', '😀'))
    .map(([chars, char]) => Buffer.from(`{"prompt":"${char.repeat(Math.ceil(chars / char.length))}"}`));
  const invalidUtf8 = fc
    .tuple(
      fc.constantFrom(
        [0xff],
        [0xc3, 0x28],
        [0xc0, 0xaf],
        [0xed, 0xa0, 0x80],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
        [0xe2, 0x82],
      ),
      fc.constantFrom('prompt', 'key', 'unknown'),
    )
    .map(([bytes, where]) => {
      const bad = Buffer.from(bytes);
      const parts =
        where === 'prompt'
          ? [Buffer.from('{"prompt":"a'), bad, Buffer.from('b","x":1}')]
          : where === 'key'
            ? [Buffer.from('{"'), bad, Buffer.from('":1}')]
            : [Buffer.from('{"prompt":"ok","note":"'), bad, Buffer.from('"}')];
      return Buffer.concat(parts);
    });
  const truncated = fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat()).map(([value, cut]) => {
    const whole = JSON.stringify({ prompt: 'document the flag', extra: value });
    return Buffer.from(whole.slice(0, 1 + (cut % (whole.length - 1))));
  });
  const proto = fc.constantFrom(
    '{"prompt":"x","__proto__":{"admin":true}}',
    '{"__proto__":{"prompt":"x"}}',
    '{"prompt":"x","constructor":{"prototype":{"admin":true}}}',
    '{"prompt":{"__proto__":null}}',
    '[{"__proto__":1}]',
  );
  const odd = fc.constantFrom(
    '',
    ' ',
    'null',
    'prompt=x',
    '\ufeff{"prompt":"x","y":1}',
    '{"prompt":"x",}',
    "{'prompt':'x'}",
    '{"prompt":"x"}{"prompt":"y"}',
    '{"prompt":"x","prompt":5}',
    '{"prompt":"\\ud800","x":1}',
    '{"prompt":"\\u0000","ref":"\\u0000"}',
    '{"prompt":"x" /* comment */}',
    'NaN',
  );
  return fc.oneof(
    fc.jsonValue().map(json),
    wrongTypes,
    unknownFields,
    deep,
    huge,
    invalidUtf8,
    truncated,
    proto.map((s) => Buffer.from(s)),
    odd.map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)),
  );
}

// ---------------------------------------------------------------------------

describe('fuzzed malformed requests', () => {
  let t: TestApp;
  let own: SeededProject;
  let other: SeededProject;
  let port: number;
  let jobId: string;
  let revokedKey: string;
  let expiredKey: string;

  before(async () => {
    t = await startTestApp();
    own = await seedProject(t.app);
    other = await seedProject(t.app);
    revokedKey = (await t.app.keys.create(own.projectId)).key;
    await t.app.keys.revoke((await t.app.keys.list(own.projectId)).at(-1)!.id);
    expiredKey = (await t.app.keys.create(own.projectId, { expiresAt: new Date(Date.now() - 1000) })).key;
    port = Number(new URL(await t.listen()).port);
    const created = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${own.projectId}/job`,
      headers: { authorization: `Bearer ${own.key}` },
      payload: { prompt: 'a job the fuzzed requests can point at' },
    });
    assert.equal(created.statusCode, 201);
    jobId = created.json().id;
  });
  after(() => t.close());

  const jobCount = async () =>
    (await t.app.store.db.selectFrom('jobs').select('id').where('project_id', '=', own.projectId).execute())
      .length;

  function requestArbitrary(): fc.Arbitrary<RawRequest> {
    const createSchema = createJobBody(t.app.config.promptMaxChars);
    const wouldCreate = (body: Buffer | undefined) => {
      if (body === undefined) return false;
      try {
        const text = body.toString('utf8').replace(/^\ufeff/, '');
        return createSchema.safeParse(JSON.parse(text)).success;
      } catch {
        return false;
      }
    };
    const keyWithBadChecksum = own.key.slice(0, -1) + (own.key.endsWith('A') ? 'B' : 'A');
    const wellFormedUnknownKey = fc
      .stringMatching(/^[0-9A-Za-z]{32}$/)
      .map((random) => `dwk_${random}${checksum(random)}`);
    /** Each arbitrary gives the values of one header, sent as that many lines. */
    const authorization: fc.Arbitrary<readonly string[]> = fc.oneof(
      { weight: 16, arbitrary: fc.constant([`Bearer ${own.key}`]) },
      fc.constant([] as string[]),
      fc.constantFrom(
        [`Bearer ${other.key}`],
        [`bearer ${own.key}`],
        [`Bearer    ${own.key}   `],
        [`Basic ${Buffer.from(`user:${own.key}`).toString('base64')}`],
        [`Token ${own.key}`],
        [own.key],
        ['Bearer'],
        ['Bearer '],
        [`Bearer ${own.key} extra`],
        [`Bearer ${keyWithBadChecksum}`],
        [`Bearer ${own.key.toLowerCase()}`],
        [`Bearer ${revokedKey}`],
        [`Bearer ${expiredKey}`],
        [`Bearer\t${own.key}`],
        [`Bearer ${'A'.repeat(20_000)}`],
        [`Bearer ${own.key}`, 'Bearer garbage'],
        ['Bearer garbage', `Bearer ${own.key}`],
        [''],
      ),
      wellFormedUnknownKey.map((key) => [`Bearer ${key}`]),
      headerGarbage.map((value) => [value]),
      headerGarbage.map((value) => [`Bearer ${value}`]),
    );
    const contentType: fc.Arbitrary<readonly string[]> = fc.oneof(
      { weight: 12, arbitrary: fc.constant(['application/json']) },
      fc.constant([] as string[]),
      fc.constantFrom(...CONTENT_TYPES).map((value) => [value]),
      headerGarbage.map((value) => [value]),
      fc.constant(['text/plain', 'application/json']),
    );
    const idempotencyKey: fc.Arbitrary<readonly string[]> = fc.oneof(
      { weight: 8, arbitrary: fc.constant([] as string[]) },
      visibleAscii(255).map((key) => [key]),
      fc.constantFrom(
        ['a b'],
        [''],
        [' '],
        ['k'.repeat(256)],
        ['ключ'],
        [Buffer.from('ключ').toString('latin1')],
        ['k1', 'k2'],
      ),
      headerGarbage.map((value) => [value]),
    );
    const extraHeader = fc.oneof(
      {
        weight: 12,
        arbitrary: fc.constantFrom<[string, string]>(
          ['Accept', 'text/event-stream'],
          ['Accept', 'application/xml'],
          ['Accept', '*/*;q=0'],
          ['Accept-Encoding', 'gzip, br'],
          ['Content-Encoding', 'gzip'],
          ['Content-Encoding', 'identity'],
          ['Expect', '100-continue'],
          ['Expect', 'the-unexpected'],
          ['Last-Event-ID', '-1'],
          ['X-Request-Id', 'x'.repeat(2000)],
          ['X-Forwarded-For', 'garbage'],
          ['Cookie', 'a=b; c'],
          ['Range', 'bytes=0-1'],
          ['If-None-Match', '*'],
          ['Upgrade', 'websocket'],
          ['Host', 'second.example'],
          ['X-Big', 'y'.repeat(20_000)],
        ),
      },
      {
        weight: 8,
        arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/), headerGarbage),
      },
      // Names that are not tokens: the HTTP parser refuses them.
      fc.constantFrom<[string, string]>(
        ['Bad Header', 'space in the name'],
        ['Bäd', 'x'],
        ['X:Y', 'z'],
        ['', 'no name'],
      ),
    );

    const projectSegment = fc.oneof(
      { weight: 12, arbitrary: fc.constant(own.projectId) },
      fc.constant(other.projectId),
      ulid.map((id) => `prj_${id}`),
      fc.constantFrom(`${own.projectId}%00`, `prj_%00`, own.projectId.toUpperCase(), `${own.projectId}%20`),
      oddSegment,
    );
    /** Job ids for reads and archives: never an existing job. */
    const unknownJob = fc.oneof(
      ulid.map((id) => `job_${id}`),
      ulid.map((id) => `job_${id.toUpperCase()}`),
      fc.constantFrom('job_', `${jobId}x`, `${jobId}%00`),
      oddSegment,
    );
    const anyJob = fc.oneof({ weight: 3, arbitrary: fc.constant(jobId) }, unknownJob);

    const createBody = bodyArbitrary().filter((body) => !wouldCreate(body));
    /** Routes that read no body get one now and then. */
    const optionalBody = oneIn(
      4,
      fc.oneof(
        createBody,
        fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      ),
    );
    /** Create and follow-up mostly get a body, never a valid one. */
    const workBody = fc.oneof({ weight: 7, arbitrary: createBody }, fc.constant(undefined));
    const routes = {
      create: fc.record({
        path: projectSegment.map((p) => `/v2/agent/${p}/job`),
        query: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, anyQuery),
        method: fc.constant('POST'),
        body: workBody,
      }),
      message: fc.record({
        path: fc.tuple(projectSegment, anyJob).map(([p, j]) => `/v2/agent/${p}/job/${j}/message`),
        query: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, anyQuery),
        method: fc.constant('POST'),
        body: workBody,
      }),
      get: fc.record({
        path: fc.tuple(projectSegment, unknownJob).map(([p, j]) => `/v2/agent/${p}/job/${j}`),
        query: anyQuery,
        method: fc.constant('GET'),
        body: optionalBody,
      }),
      archive: fc.record({
        path: fc.tuple(projectSegment, unknownJob).map(([p, j]) => `/v2/agent/${p}/job/${j}/archive`),
        query: anyQuery,
        method: fc.constant('POST'),
        body: optionalBody,
      }),
      list: fc.record({
        path: projectSegment.map((p) => `/v2/agent/${p}/jobs`),
        query: listQuery,
        method: fc.constant('GET'),
        body: optionalBody,
      }),
      events: fc.record({
        path: fc.tuple(projectSegment, anyJob).map(([p, j]) => `/v2/agent/${p}/job/${j}/events`),
        query: eventsQuery,
        method: fc.constant('GET'),
        body: optionalBody,
      }),
      /** Paths no route matches; kept under API-looking prefixes so that no page of the dashboard is hit. */
      unrouted: fc.record({
        path: fc
          .tuple(
            fc.constantFrom('/v2', '/v2/agent', '/v1/agent', '/V2/agent', '/v2/agents', '/v2/agent/x/y/z'),
            fc.array(oddSegment, { maxLength: 4 }),
          )
          .map(([prefix, segments]) => [prefix, ...segments].join('/'))
          .filter((path) => !/^\/v2\/agent\/[^/]+\/(job|jobs)(\/|$)/.test(path)),
        query: anyQuery,
        method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        body: optionalBody,
      }),
    };
    const wrongMethod = fc.constantFrom(
      'PUT',
      'DELETE',
      'PATCH',
      'OPTIONS',
      'TRACE',
      'SEARCH',
      'PROPFIND',
      'MKCOL',
      'PURGE',
      'CONNECT',
      'get',
      'FOO',
    );
    const route = fc.oneof(
      { weight: 8, arbitrary: routes.create },
      { weight: 4, arbitrary: routes.message },
      { weight: 2, arbitrary: routes.get },
      { weight: 1, arbitrary: routes.archive },
      { weight: 3, arbitrary: routes.list },
      { weight: 2, arbitrary: routes.events },
      { weight: 1, arbitrary: routes.unrouted },
    );

    return fc
      .record({
        route,
        otherMethod: oneIn(10, wrongMethod),
        authorization,
        contentType,
        idempotencyKey,
        extra: fc.array(extraHeader, { maxLength: 3 }),
        chunkSize: oneIn(6, fc.integer({ min: 1, max: 65_536 })),
        noHost: fc.nat(29).map((n) => n === 0),
        version: oneIn(
          15,
          fc.constantFrom('HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', 'http/1.1', 'HTTP/1.1 ', 'HTTP/11'),
        ),
      })
      .chain((r) => {
        const headers: [string, string][] = [
          ...r.authorization.map((v): [string, string] => ['Authorization', v]),
          ...r.contentType.map((v): [string, string] => ['Content-Type', v]),
          ...r.idempotencyKey.map((v): [string, string] => ['Idempotency-Key', v]),
          ...r.extra,
        ];
        return fc.shuffledSubarray(headers, { minLength: headers.length, maxLength: headers.length }).map(
          (shuffled): RawRequest => ({
            method: r.otherMethod ?? r.route.method,
            target: `${r.route.path}${r.route.query}`,
            headers: shuffled,
            body: r.route.body,
            // Keep the number of chunks bounded for the large bodies.
            chunkSize:
              r.chunkSize && r.route.body
                ? Math.max(r.chunkSize, Math.ceil(r.route.body.length / 2000))
                : undefined,
            noHost: r.noHost,
            version: r.version,
          }),
        );
      });
  }

  test(`${RUNS} malformed requests each get a 4xx problem+json; the server stays healthy`, async () => {
    const codes = new Map<string, number>();
    const secrets = [own.key, other.key, revokedKey, expiredKey];
    await fc.assert(
      fc.asyncProperty(requestArbitrary(), async (request) => {
        const problem = assertClientProblem(await exchange(port, request), describeRequest(request), secrets);
        codes.set(problem.code, (codes.get(problem.code) ?? 0) + 1);
      }),
      // The time limit bounds a run that hangs, shrinking included; a normal run takes seconds.
      { numRuns: RUNS, interruptAfterTimeLimit: 120_000, markInterruptAsFailure: true },
    );
    // Every line of defence was reached, not only the first: the HTTP parser,
    // authentication, the body parser and the validation of bodies and queries.
    const expected = [
      'invalid-request',
      'invalid-json',
      'invalid-cursor',
      'unauthorized',
      'forbidden',
      'not-found',
      'project-not-found',
      'job-not-found',
      'payload-too-large',
      'uri-too-long',
      'unsupported-media-type',
      'expectation-failed',
      'headers-too-large',
    ];
    for (const code of expected)
      assert.ok(codes.has(code), `no answer had code ${code}: ${JSON.stringify([...codes])}`);

    const health = await exchange(port, { method: 'GET', target: '/healthz', headers: [] });
    assert.equal(health.status, 200);
    const create = await exchange(port, {
      method: 'POST',
      target: `/v2/agent/${own.projectId}/job`,
      headers: [
        ['Authorization', `Bearer ${own.key}`],
        ['Content-Type', 'application/json'],
      ],
      body: Buffer.from(JSON.stringify({ prompt: 'still working' })),
    });
    assert.equal(create.status, 201);
    // Nothing but the two valid creates made a job or used the rate limit (docs/api/rate-limits.mdx).
    assert.match(create.headers.ratelimit?.[0] ?? '', /r=98;/);
    assert.equal(await jobCount(), 2);
  });

  /** One request on a raw socket, expected to be refused with `status` and `code`. */
  async function expectProblem(request: RawRequest, status: number, code: string) {
    const response = await exchange(port, request);
    const problem = assertClientProblem(response, describeRequest(request), [own.key]);
    assert.equal(response.status, status, describeRequest(request));
    assert.equal(problem.code, code, describeRequest(request));
    return problem;
  }
  const authorized = (): [string, string][] => [
    ['Authorization', `Bearer ${own.key}`],
    ['Content-Type', 'application/json'],
  ];

  test('regression: an HTTP/1.1 request without Host is a problem+json 400, not an empty one', async () => {
    await expectProblem(
      { method: 'GET', target: '/healthz', headers: [], noHost: true },
      400,
      'invalid-request',
    );
    const http10 = Buffer.from('GET /healthz HTTP/1.0\r\n\r\n');
    assert.equal((await exchange(port, http10)).status, 200, 'HTTP/1.0 needs no Host');
  });

  test('regression: an unknown Expect is a problem+json 417; 100-continue still works', async () => {
    const target = `/v2/agent/${own.projectId}/jobs?limit=0`;
    await expectProblem({ method: 'GET', target, headers: [['Expect', 'x']] }, 417, 'expectation-failed');
    await expectProblem(
      { method: 'GET', target, headers: [...authorized(), ['Expect', '100-continue']] },
      400,
      'invalid-request',
    );
  });

  test('regression: CONNECT is answered (404) instead of dropped, and its connection closes', async () => {
    // Bytes after the request head belong to the tunnel; they must not keep the connection open.
    const connect = Buffer.concat([
      Buffer.from('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
      Buffer.alloc(512 * 1024, 'x'),
    ]);
    const response = await exchange(port, connect);
    assert.equal(response.status, 404);
    assertClientProblem(response, 'CONNECT', []);
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        t.server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    for (let waited = 0; (await connections()) > 0; waited += 20) {
      assert.ok(waited < 5000, 'the CONNECT connection stays open');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  test('regression: deep JSON with an Idempotency-Key is a 400, not a stack overflow (500)', async () => {
    const deep = Buffer.from(`{"prompt":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    for (const target of [
      `/v2/agent/${own.projectId}/job`,
      `/v2/agent/${own.projectId}/job/${jobId}/message`,
    ]) {
      const problem = await expectProblem(
        { method: 'POST', target, headers: [...authorized(), ['Idempotency-Key', 'deep']], body: deep },
        400,
        'invalid-request',
      );
      assert.match(problem.detail, /nested more than \d+ levels/);
    }
    // A body nested a few levels is still judged by the schema.
    const shallow = Buffer.from(JSON.stringify({ prompt: [[['x']]] }));
    const problem = await expectProblem(
      { method: 'POST', target: `/v2/agent/${own.projectId}/job`, headers: authorized(), body: shallow },
      400,
      'invalid-request',
    );
    assert.deepEqual(problem.errors, [{ field: 'prompt', message: 'must be a string' }]);
  });

  test('regression: NUL characters are refused with 400/404 on both databases, not a PostgreSQL 500', async () => {
    const body = Buffer.from(JSON.stringify({ prompt: 'a\u0000b' }));
    const target = `/v2/agent/${own.projectId}/job`;
    await expectProblem({ method: 'POST', target, headers: authorized(), body }, 400, 'invalid-request');
    for (const project of [`${own.projectId}%00`, 'prj_%00']) {
      // The job poll reads its key and its job in one statement: the project id is in that query.
      for (const route of ['jobs', 'job/job_%00']) {
        await expectProblem(
          { method: 'GET', target: `/v2/agent/${project}/${route}`, headers: authorized() },
          404,
          'project-not-found',
        );
      }
    }
  });

  test('regression: an overlong path segment is a 414 whose detail matches its status', async () => {
    const problem = await expectProblem(
      { method: 'GET', target: `/v2/agent/${'p'.repeat(600)}/jobs`, headers: authorized() },
      414,
      'uri-too-long',
    );
    assert.equal(problem.title, 'URI Too Long');
  });
});
