import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { assets } from '../../src/dashboard/assets.ts';
import { bearer, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { createJob } from '../helpers/worker.ts';

/** The head of an answer to bytes written straight onto a socket (what no HTTP client would send). */
function rawHead(base: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(text.slice(0, text.indexOf('\r\n\r\n')));
      }
    });
    socket.on('error', reject);
  });
}

/** The headers of a response whose body may never end (an event stream): read and dropped. */
function headersOf(url: URL, options: { method?: string; headers?: Record<string, string>; body?: string }) {
  return new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      resolve({ status: res.statusCode!, headers: res.headers });
      res.destroy();
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end(options.body);
  });
}

/**
 * `X-Content-Type-Options: nosniff` on every answer: a browser must never read a diff or a
 * transcript that holds model-written text as HTML, whatever the text looks like.
 */
describe('X-Content-Type-Options: nosniff on every response', () => {
  let t: TestApp;
  let base: string;
  let key: string;
  let p: string;
  let jobId: string;

  before(async () => {
    t = await startTestApp();
    const seeded = await seedProject(t.app);
    key = seeded.key;
    p = seeded.projectId;
    jobId = await createJob(t.app, p, '<script>alert(1)</script>');
    base = await t.listen();
  });
  after(async () => {
    await t.close();
  });

  test('API, v1, dashboard, assets, errors and streams', async () => {
    const json = { ...bearer(key), 'content-type': 'application/json' };
    const requests: [string, string, { method?: string; headers?: Record<string, string>; body?: string }][] =
      [
        ['health', '/healthz', {}],
        ['readiness', '/readyz', {}],
        ['metrics', '/metrics', {}],
        ['OpenAPI', '/openapi.json', {}],
        ['job', `/v2/agent/${p}/job/${jobId}`, { headers: bearer(key) }],
        ['job list', `/v2/agent/${p}/jobs`, { headers: bearer(key) }],
        ['transcript', `/v2/agent/${p}/job/${jobId}/events`, { headers: bearer(key) }],
        [
          'transcript stream',
          `/v2/agent/${p}/job/${jobId}/events`,
          { headers: { ...bearer(key), accept: 'text/event-stream' } },
        ],
        ['diff problem', `/v2/agent/${p}/job/${jobId}/diff`, { headers: bearer(key) }],
        ['create', `/v2/agent/${p}/job`, { method: 'POST', headers: json, body: '{"prompt":"Fix it"}' }],
        ['malformed JSON', `/v2/agent/${p}/job`, { method: 'POST', headers: json, body: '{' }],
        [
          'not JSON',
          `/v2/agent/${p}/job`,
          { method: 'POST', headers: { ...bearer(key), 'content-type': 'text/html' }, body: '<b>' },
        ],
        ['no key', `/v2/agent/${p}/job/${jobId}`, {}],
        ['v1 session', `/v1/agent/${p}/job/${jobId}`, { headers: bearer(key) }],
        [
          'v1 stream',
          `/v1/agent/${p}/job`,
          { method: 'POST', headers: json, body: '{"messages":[{"role":"user","content":"Fix it"}]}' },
        ],
        ['unknown route', '/nothing/here', {}],
        ['malformed path', '/v2/agent/%zz/job', {}],
        ['sign-in page', '/login', {}],
        ['dashboard redirect', '/', {}],
        ['dashboard asset', assets.script!.path, {}],
        ['expectation', '/healthz', { headers: { expect: 'something-else' } }],
      ];
    for (const [name, path, options] of requests) {
      const answer = await headersOf(new URL(path, base), options);
      assert.equal(answer.headers['x-content-type-options'], 'nosniff', `${name}: ${answer.status}`);
    }
    // Answers written before Fastify has a request: a malformed header, CONNECT.
    for (const bytes of [
      'GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n',
      `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`,
    ]) {
      const head = await rawHead(base, bytes);
      assert.match(head, /^x-content-type-options: nosniff$/im, head);
    }
  });
});
