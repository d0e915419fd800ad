import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { agentJobSchema } from '../../src/jobs/agent-job.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

// ajv-formats is CommonJS; its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void;

/** Mintlify's published Agent API v2 description (its AgentJob and Error schemas), kept with the tests. */
const MINTLIFY = path.resolve(import.meta.dirname, '../data/mintlify-agent-v2.openapi.json');

interface Exchange {
  method: string;
  /** The OpenAPI path template the request matched. */
  template: string;
  status: number;
  contentType: string;
  body: unknown;
}

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: { $ref: string } }> }> }>
  >;
};

/** Validates an exchange against a document: the status must be declared and the body match its schema. */
function checkAgainst(
  ajv: Ajv | Ajv2020,
  docId: string,
  doc: Doc,
  exchange: Exchange,
  mediaType: string,
): string[] {
  const operation = doc.paths[exchange.template]?.[exchange.method.toLowerCase()];
  assert.ok(operation, `${exchange.method} ${exchange.template} is not in ${docId}`);
  const response = operation.responses[String(exchange.status)];
  if (!response)
    return [`${exchange.method} ${exchange.template} → ${exchange.status} is not declared in ${docId}`];
  const ref = response.content?.[mediaType]?.schema.$ref;
  if (!ref)
    return [
      `${exchange.method} ${exchange.template} → ${exchange.status} declares no ${mediaType} body in ${docId}`,
    ];
  const validate = ajv.getSchema(`${docId}${ref}`);
  assert.ok(validate, `${ref} in ${docId}`);
  return validate(exchange.body)
    ? []
    : [`${exchange.method} ${exchange.template} → ${exchange.status}: ${ajv.errorsText(validate.errors)}`];
}

describe('API contract', () => {
  let t: TestApp;
  let p: SeededProject;
  const exchanges: Exchange[] = [];

  async function call(method: string, template: string, url: string, payload?: unknown, key = p.key) {
    const res = await t.server.inject({
      method: method as 'GET' | 'POST',
      url,
      headers: { ...bearer(key), ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    const exchange = {
      method,
      template,
      status: res.statusCode,
      contentType: String(res.headers['content-type']),
      body: res.json(),
    };
    exchanges.push(exchange);
    return exchange;
  }

  before(async () => {
    t = await startTestApp({ env: { DOCWRIGHT_RATE_LIMIT: '4' } });
    p = await seedProject(t.app);
    const base = `/v2/agent/${p.projectId}`;
    // Parsed with the record's own schema: an answer of another shape fails here, not later.
    const job = agentJobSchema.parse(
      (await call('POST', '/v2/agent/{projectId}/job', `${base}/job`, { prompt: 'Add a page' })).body,
    );
    const second = agentJobSchema.parse(
      (await call('POST', '/v2/agent/{projectId}/job', `${base}/job`, { prompt: 'x', draft: true })).body,
    );
    await call('POST', '/v2/agent/{projectId}/job', `${base}/job`, { prompt: '' });
    await call('GET', '/v2/agent/{projectId}/job/{id}', `${base}/job/${job.id}`);
    await call('GET', '/v2/agent/{projectId}/job/{id}', `${base}/job/job_00000000000000000000000000`);
    await call('GET', '/v2/agent/{projectId}/jobs', `${base}/jobs?limit=1`);
    await call('GET', '/v2/agent/{projectId}/jobs', `${base}/jobs?limit=500`);
    await call('POST', '/v2/agent/{projectId}/job/{id}/message', `${base}/job/${job.id}/message`, {
      prompt: 'more',
    });
    await t.app.store.db
      .updateTable('jobs')
      .set({
        status: 'completed',
        pr_link: 'https://github.com/o/r/pull/1',
        summary: 'Added',
        input_tokens: 10,
        output_tokens: 5,
      })
      .where('id', '=', job.id)
      .execute();
    await call('GET', '/v2/agent/{projectId}/job/{id}', `${base}/job/${job.id}`);
    await call('POST', '/v2/agent/{projectId}/job/{id}/message', `${base}/job/${job.id}/message`, {
      prompt: 'more',
    });
    await call('POST', '/v2/agent/{projectId}/job/{id}/message', `${base}/job/${job.id}/message`, {
      promt: 'typo',
    });
    await call('POST', '/v2/agent/{projectId}/job/{id}/retry', `${base}/job/${job.id}/retry`);
    await t.app.store.db
      .updateTable('jobs')
      .set({ status: 'failed', error_code: 'model-unavailable', error_message: 'down' })
      .where('id', '=', second.id)
      .execute();
    await call('POST', '/v2/agent/{projectId}/job/{id}/retry', `${base}/job/${second.id}/retry`, {});
    await call('POST', '/v2/agent/{projectId}/job', `${base}/job`, { prompt: 'over the limit' });
    await call(
      'POST',
      '/v2/agent/{projectId}/job/{id}/archive',
      `${base}/job/${second.id}`.concat('/archive'),
    );
    await call('GET', '/v2/agent/{projectId}/job/{id}/events', `${base}/job/${job.id}/events`);
    await call('GET', '/v2/agent/{projectId}/job/{id}', `${base}/job/${job.id}`, undefined, 'dwk_invalid');
    // Mintlify v1 (extension): its own shapes, described in the same document.
    const v1 = `/v1/agent/${p.projectId}`;
    await call('GET', '/v1/agent/{projectId}/job/{id}', `${v1}/job/${job.id}`);
    await call('GET', '/v1/agent/{projectId}/job/{id}', `${v1}/job/job_00000000000000000000000000`);
    await call('GET', '/v1/agent/{projectId}/jobs', `${v1}/jobs?skip=0&take=2`);
    await call('GET', '/v1/agent/{projectId}/jobs', `${v1}/jobs?take=0`);
    await call('POST', '/v1/agent/{projectId}/job', `${v1}/job`, { messages: [] });
  });
  after(() => t.close());

  test('the exchanges cover successes and errors of every route', () => {
    const statuses = new Set(exchanges.map((e) => e.status));
    for (const s of [200, 201, 400, 401, 404, 409, 429]) assert.ok(statuses.has(s), `no ${s} exchange`);
    for (const e of exchanges) {
      assert.equal(
        e.contentType,
        e.status < 300 ? 'application/json; charset=utf-8' : 'application/problem+json; charset=utf-8',
      );
    }
  });

  test('every response validates against our /openapi.json', async () => {
    const doc = (await t.server.inject('/openapi.json')).json();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'ours');
    const failures = exchanges.flatMap((e) =>
      checkAgainst(ajv, 'ours', doc, e, e.status < 300 ? 'application/json' : 'application/problem+json'),
    );
    assert.deepEqual(failures, []);
  });

  test("v1 operations are marked as the extension they are; v2's operations carry no extension tag", async () => {
    const doc = (await t.server.inject('/openapi.json')).json();
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.values(item as Record<string, { tags?: string[]; summary: string }>).map((op) => ({ path, op })),
    );
    const v1 = operations.filter((o) => o.path.startsWith('/v1/'));
    assert.equal(v1.length, 4);
    for (const { path, op } of v1) {
      assert.deepEqual(op.tags, ['Mintlify v1 compatibility (extension)'], path);
      assert.match(op.summary, /^\(extension\) Mintlify v1: /, path);
    }
    for (const { path, op } of operations.filter((o) => o.path.startsWith('/v2/')))
      assert.equal(op.tags, undefined, path);
  });

  test('create, get and message responses validate against the Mintlify Agent API v2 schemas', () => {
    const doc = JSON.parse(readFileSync(MINTLIFY, 'utf8'));
    // OpenAPI 3.0 schemas: draft-04-like with `nullable`, which Ajv understands.
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'mintlify');
    const agentJob = ajv.getSchema('mintlify#/components/schemas/AgentJob')!;
    const error = ajv.getSchema('mintlify#/components/schemas/Error')!;
    const relevant = exchanges.filter(
      (e) =>
        e.template.startsWith('/v2/') &&
        !e.template.endsWith('/jobs') &&
        !e.template.endsWith('/archive') &&
        !e.template.endsWith('/events'),
    );
    assert.ok(relevant.length >= 8);
    for (const e of relevant) {
      const validate = e.status < 300 ? agentJob : error;
      assert.ok(
        validate(e.body),
        `${e.method} ${e.template} → ${e.status}: ${ajv.errorsText(validate.errors)}`,
      );
      // Where the reference declares the status, its declared schema must accept the body too.
      const declared = doc.paths[e.template]?.[e.method.toLowerCase()]?.responses[String(e.status)];
      if (declared) assert.deepEqual(checkAgainst(ajv, 'mintlify', doc, e, 'application/json'), []);
    }
    // Mintlify's AgentJob is loose (nothing required); ours must still carry every field.
    for (const e of relevant.filter((x) => x.status < 300)) {
      for (const field of Object.keys(doc.components.schemas.AgentJob.properties)) {
        const { body } = e;
        assert.ok(
          typeof body === 'object' && body !== null && field in body,
          `${field} missing from ${e.method} ${e.template}`,
        );
      }
    }
  });
});
