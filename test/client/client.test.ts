import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { createClient, type DocwrightClient } from '../../src/client/client.ts';
import { DocwrightApiError } from '../../src/client/errors.ts';
import type { AgentJob, JobEvent } from '../../src/client/types.ts';
import { appendEvents } from '../../src/jobs/events.ts';
import type { Runner } from '../../src/pipeline/runner.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  signal?: AbortSignal | null | undefined;
}

/** A fetch that records every request and lets a test answer or break some of them. */
function spyFetch(
  intercept?: (request: Seen, call: number, real: () => Promise<Response>) => Promise<Response | undefined>,
) {
  const seen: Seen[] = [];
  const fetchSpy: typeof fetch = async (input, init) => {
    const request: Seen = {
      method: init?.method ?? 'GET',
      url: String(input),
      headers: { ...(init?.headers as Record<string, string>) },
      signal: init?.signal,
    };
    seen.push(request);
    const real = () => fetch(input, init);
    return (await intercept?.(request, seen.length, real)) ?? real();
  };
  return { fetch: fetchSpy, seen };
}

const problem = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });

/** Rejects with the error `promise` rejects with, or fails when it resolves. */
async function failure(promise: Promise<unknown>): Promise<DocwrightApiError> {
  const error = await promise.then(
    (value) => assert.fail(`expected an error, got ${JSON.stringify(value)}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof DocwrightApiError, `not a DocwrightApiError: ${String(error)}`);
  return error;
}

describe('client: every method against the real API', () => {
  let t: TestApp;
  let base: string;
  let p: SeededProject;
  let client: DocwrightClient;
  before(async () => {
    t = await startTestApp();
    base = await t.listen();
    p = await seedProject(t.app, { rateLimit: 1000 });
    client = createClient({ baseUrl: base, apiKey: p.key });
  });
  // undici opens a spare connection after an aborted stream; the server must not wait for it to idle out.
  after(() => {
    t.server.server.closeAllConnections();
    return t.close();
  });

  test('createJob → getJob → events → archiveJob (idempotent) → sendMessage refused on an archived job', async () => {
    const created = await client.createJob(p.projectId, {
      prompt: '  Document the limits  ',
      ref: 'main',
      draft: true,
    });
    assert.match(created.id, /^job_[0-9a-z]{26}$/);
    assert.equal(created.status, 'active');
    assert.equal(created.source.ref, 'main');
    assert.equal(created.source.repository, pathToFileURL(p.repository).href);
    assert.equal(created.prLink, null);
    assert.deepEqual(await client.getJob(p.projectId, created.id), created);

    const events = await client.events(p.projectId, created.id);
    assert.deepEqual(
      events.map((e) => [e.type, (e.data as { prompt?: string }).prompt]),
      [['job.created', 'Document the limits']],
    );

    const busy = await failure(client.sendMessage(p.projectId, created.id, { prompt: 'more' }));
    assert.equal(busy.status, 409);
    assert.equal(busy.code, 'job-busy');

    const archived = await client.archiveJob(p.projectId, created.id);
    assert.equal(archived.status, 'archived');
    assert.ok(archived.archivedAt);
    assert.deepEqual(
      await client.archiveJob(p.projectId, created.id),
      archived,
      'archiving twice changes nothing',
    );
    const later = await client.events(p.projectId, created.id, { after: events[0]!.id });
    assert.deepEqual(
      later.map((e) => e.type),
      ['job.archived'],
    );

    const refused = await failure(client.sendMessage(p.projectId, created.id, { prompt: 'more' }));
    assert.equal(refused.status, 409);
    assert.equal(refused.code, 'job-archived');
  });

  test('listJobs pages with limit, cursor and status; iterateJobs walks every page lazily', async () => {
    const project = await seedProject(t.app);
    const ids: string[] = [];
    const spy = spyFetch();
    const own = createClient({ baseUrl: base, apiKey: project.key, fetch: spy.fetch });
    for (let i = 0; i < 5; i++) ids[i] = (await own.createJob(project.projectId, { prompt: `job ${i}` })).id;
    await own.archiveJob(project.projectId, ids[1]!);
    const newestFirst = [...ids].reverse();

    const first = await own.listJobs(project.projectId, { limit: 2 });
    assert.deepEqual(
      first.jobs.map((j) => j.id),
      newestFirst.slice(0, 2),
    );
    assert.ok(first.nextCursor);
    const second = await own.listJobs(project.projectId, { limit: 2, cursor: first.nextCursor });
    assert.deepEqual(
      second.jobs.map((j) => j.id),
      newestFirst.slice(2, 4),
    );
    const archived = await own.listJobs(project.projectId, { status: 'archived' });
    assert.deepEqual(
      archived.jobs.map((j) => j.id),
      [ids[1]],
    );
    assert.equal(archived.nextCursor, null);

    spy.seen.length = 0;
    const walked: AgentJob[] = [];
    for await (const job of own.iterateJobs(project.projectId, { pageSize: 2 })) walked.push(job);
    assert.deepEqual(
      walked.map((j) => j.id),
      newestFirst,
    );
    const pages = spy.seen.map((s) => new URL(s.url).searchParams);
    assert.equal(pages.length, 3, 'five jobs in pages of two');
    assert.equal(pages[0]!.get('cursor'), null);
    assert.ok(pages[1]!.get('cursor') && pages[2]!.get('cursor'));

    spy.seen.length = 0;
    for await (const job of own.iterateJobs(project.projectId, { pageSize: 2 })) {
      assert.equal(job.id, newestFirst[0]);
      break;
    }
    assert.equal(spy.seen.length, 1, 'breaking out early fetches no further page');

    const active: string[] = [];
    for await (const job of own.iterateJobs(project.projectId, { status: 'active', pageSize: 100 }))
      active.push(job.id);
    assert.deepEqual(
      active,
      newestFirst.filter((id) => id !== ids[1]),
    );
  });

  test('Idempotency-Key: a repeat returns the original job and creates nothing; another body with the key is 422', async () => {
    const project = await seedProject(t.app);
    const own = createClient({ baseUrl: base, apiKey: project.key });
    const first = await own.createJob(project.projectId, { prompt: 'once' }, { idempotencyKey: 'create-1' });
    const again = await own.createJob(project.projectId, { prompt: 'once' }, { idempotencyKey: 'create-1' });
    assert.deepEqual(again, first);
    assert.equal((await own.listJobs(project.projectId)).jobs.length, 1);
    const mismatch = await failure(
      own.createJob(project.projectId, { prompt: 'other' }, { idempotencyKey: 'create-1' }),
    );
    assert.equal(mismatch.status, 422);
    assert.equal(mismatch.code, 'idempotency-key-mismatch');
    assert.equal((await own.listJobs(project.projectId)).jobs.length, 1);
  });

  test('401, 403 and 404 carry the problem fields; the API key is in no message', async () => {
    const unknownKey = `dwk_${'A'.repeat(32)}000000`;
    const stranger = createClient({ baseUrl: base, apiKey: unknownKey });
    const unauthorized = await failure(stranger.getJob(p.projectId, 'job_x'));
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.code, 'unauthorized');
    assert.equal(unauthorized.type, 'urn:docwright:problem:unauthorized');
    assert.equal(unauthorized.title, 'Unauthorized');
    assert.ok(unauthorized.detail.length > 0);
    assert.ok(!unauthorized.message.includes(unknownKey));
    assert.match(unauthorized.message, /HTTP 401 unauthorized/);

    const other = await seedProject(t.app);
    const forbidden = await failure(
      createClient({ baseUrl: base, apiKey: other.key }).getJob(p.projectId, 'job_x'),
    );
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.code, 'forbidden');

    const missing = await failure(client.getJob(p.projectId, 'job_01NOSUCHJOB0000000000000000'));
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'job-not-found');
    assert.match(missing.detail, /job_01NOSUCHJOB0000000000000000 does not exist/);
    assert.match(
      missing.message,
      /^job job_01NOSUCHJOB0000000000000000 does not exist in this project \(HTTP 404 job-not-found; GET \/v2\/agent\/prj_/,
    );

    const invalid = await failure(client.createJob(p.projectId, { prompt: '   ', ref: 'a..b' }));
    assert.equal(invalid.status, 400);
    assert.equal(invalid.code, 'invalid-request');
    assert.deepEqual(invalid.errors?.map((e) => e.field).sort(), ['prompt', 'ref']);

    // Even a server that echoes the credential back does not get it into an error.
    const echo = spyFetch(async (request) =>
      problem(500, {
        code: 'internal-error',
        title: 'Internal Server Error',
        detail: `failed for ${request.headers.authorization}`,
      }),
    );
    const echoed = await failure(
      createClient({ baseUrl: base, apiKey: p.key, fetch: echo.fetch }).getJob(p.projectId, 'job_x'),
    );
    assert.equal(echoed.status, 500);
    assert.equal(echo.seen.length, 1, 'a 500 is not retried');
    assert.equal(echo.seen[0]!.headers.authorization, `Bearer ${p.key}`);
    assert.ok(!echoed.message.includes(p.key) && !echoed.detail.includes(p.key));
    assert.match(echoed.detail, /failed for Bearer \*\*\*/);
  });

  test('429: retryAfter from Retry-After; an hour-long wait is not slept through, even with an Idempotency-Key', async () => {
    const limited = await seedProject(t.app, { rateLimit: 1 });
    const spy = spyFetch();
    const own = createClient({ baseUrl: base, apiKey: limited.key, fetch: spy.fetch });
    await own.createJob(limited.projectId, { prompt: 'the one use' });
    for (const idempotencyKey of [undefined, 'second']) {
      spy.seen.length = 0;
      const error = await failure(
        own.createJob(limited.projectId, { prompt: 'one too many' }, { idempotencyKey }),
      );
      assert.equal(error.status, 429);
      assert.equal(error.code, 'rate-limited');
      assert.ok(
        error.retryAfter !== undefined && error.retryAfter > 3500 && error.retryAfter <= 3600,
        String(error.retryAfter),
      );
      assert.match(error.message, /retry after \d+ s/);
      assert.equal(spy.seen.length, 1);
    }
  });

  test('retries: GET after a 503 waits Retry-After; bounded; never a POST without Idempotency-Key', async () => {
    const job = await client.createJob(p.projectId, { prompt: 'retry me' });
    const once = spyFetch(async (_request, call) =>
      call === 1
        ? problem(503, { code: 'service-unavailable', detail: 'down' }, { 'retry-after': '1' })
        : undefined,
    );
    const started = Date.now();
    const got = await createClient({ baseUrl: base, apiKey: p.key, fetch: once.fetch }).getJob(
      p.projectId,
      job.id,
    );
    assert.equal(got.id, job.id);
    assert.equal(once.seen.length, 2);
    assert.ok(Date.now() - started >= 950, `waited ${Date.now() - started} ms`);

    const always = spyFetch(async () =>
      problem(
        503,
        { code: 'service-unavailable', detail: 'the database is unavailable' },
        { 'retry-after': '0' },
      ),
    );
    const down = createClient({ baseUrl: base, apiKey: p.key, fetch: always.fetch, retries: 3 });
    const exhausted = await failure(down.getJob(p.projectId, job.id));
    assert.equal(exhausted.status, 503);
    assert.equal(exhausted.retryAfter, 0);
    assert.equal(always.seen.length, 4, 'one attempt and three retries');
    always.seen.length = 0;
    await failure(down.createJob(p.projectId, { prompt: 'not twice' }));
    assert.equal(always.seen.length, 1, 'a POST without a key is sent once');
    always.seen.length = 0;
    await failure(down.archiveJob(p.projectId, job.id));
    assert.equal(always.seen.length, 4, 'archive is idempotent and retried');
  });

  test('a connection lost after the server acted: with a key the retry replays the job, without one it is not repeated', async () => {
    const project = await seedProject(t.app);
    // The request reaches the server, which creates the job; the answer is lost on the way back.
    const lose = spyFetch(async (request, call, real) => {
      if (call !== 1 || request.method !== 'POST') return undefined;
      await (await real()).text();
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
      });
    });
    const own = createClient({ baseUrl: base, apiKey: project.key, fetch: lose.fetch, retryBaseDelayMs: 10 });
    const created = await own.createJob(
      project.projectId,
      { prompt: 'exactly once' },
      { idempotencyKey: 'lost-1' },
    );
    assert.equal(lose.seen.length, 2);
    assert.equal(lose.seen[1]!.headers['idempotency-key'], 'lost-1');
    const listed = await own.listJobs(project.projectId);
    assert.deepEqual(
      listed.jobs.map((j) => j.id),
      [created.id],
    );

    lose.seen.length = 0;
    const lost = createClient({
      baseUrl: base,
      apiKey: project.key,
      fetch: spyFetch(async (_r, _c, real) => {
        await (await real()).text();
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
        });
      }).fetch,
    });
    const error = await failure(lost.createJob(project.projectId, { prompt: 'sent once' }));
    assert.equal(error.status, 0);
    assert.equal(error.code, 'network-error');
    assert.match(error.message, /other side closed \(UND_ERR_SOCKET\)/);
    assert.ok(!error.message.includes(project.key));
    assert.equal(
      (await own.listJobs(project.projectId)).jobs.length,
      2,
      'sent once, created once, not retried',
    );
  });

  test('timeoutMs: no answer is a timeout error; the caller aborting rejects with its own reason', async () => {
    // A server that never answers: the request ends only when its signal aborts.
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        const signal = init!.signal!;
        signal.addEventListener('abort', () => reject(signal.reason));
      });
    const slow = createClient({ baseUrl: base, apiKey: p.key, timeoutMs: 100, retries: 0, fetch: hanging });
    const started = Date.now();
    const timedOut = await failure(slow.getJob(p.projectId, 'job_x'));
    assert.equal(timedOut.code, 'timeout');
    assert.equal(timedOut.status, 0);
    assert.ok(Date.now() - started < 2_000);

    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const pending = createClient({ baseUrl: base, apiKey: p.key, fetch: hanging }).getJob(
      p.projectId,
      'job_x',
      {
        signal: controller.signal,
      },
    );
    controller.abort(reason);
    await assert.rejects(pending, (e) => e === reason);
  });

  test('followEvents: a stream dropped mid-event, then a real socket drop, resume with Last-Event-ID without gaps or repeats', async () => {
    const job = await client.createJob(p.projectId, { prompt: 'stream me' });
    const emit = async (n: number) => {
      await appendEvents(t.app.store.db, [{ jobId: job.id, type: 'test.step', data: { n } }], new Date());
      await t.app.signals.publish({ kind: 'job-event', jobId: job.id });
    };
    for (const n of [1, 2, 3]) await emit(n);
    // The first stream breaks after two whole events and a few bytes of the third.
    const spy = spyFetch(async (request, _call, real) => {
      if (request.headers.accept !== 'text/event-stream' || spy.seen.length !== 1) return undefined;
      const response = await real();
      return new Response(cutAfterEvents(response.body!, 2), {
        status: response.status,
        headers: response.headers,
      });
    });
    const follower = createClient({ baseUrl: base, apiKey: p.key, fetch: spy.fetch });
    const received: JobEvent[] = [];
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(new Error('test timed out')), 15_000);
    try {
      for await (const event of follower.followEvents(p.projectId, job.id, {
        signal: controller.signal,
        reconnectDelayMs: 20,
      })) {
        received.push(event);
        if (received.length === 4) {
          await emit(4);
          await emit(5);
        }
        if (received.length === 6) {
          t.server.server.closeAllConnections();
          await emit(6);
        }
        if (received.length === 7) break;
      }
    } finally {
      clearTimeout(deadline);
    }
    const all = await client.events(p.projectId, job.id);
    assert.deepEqual(
      received.map((e) => e.id),
      all.map((e) => e.id),
    );
    assert.deepEqual(
      received.map((e) => (e.type === 'test.step' ? (e.data as { n: number }).n : e.type)),
      ['job.created', 1, 2, 3, 4, 5, 6],
    );
    const streams = spy.seen.filter((s) => s.headers.accept === 'text/event-stream');
    assert.equal(streams.length, 3);
    assert.equal(streams[0]!.headers['last-event-id'], undefined);
    assert.equal(
      streams[1]!.headers['last-event-id'],
      String(received[1]!.id),
      'resumes after the last whole event',
    );
    assert.equal(streams[2]!.headers['last-event-id'], String(received[5]!.id));

    const after = [];
    for await (const event of follower.followEvents(p.projectId, job.id, { after: received[4]!.id })) {
      after.push(event.id);
      if (after.length === 2) break;
    }
    assert.deepEqual(after, [received[5]!.id, received[6]!.id], '`after` starts later in the transcript');
  });

  test('followEvents: a server that ignores Last-Event-ID and replays from the start still yields each event once', async () => {
    const job = await client.createJob(p.projectId, { prompt: 'replayed' });
    await appendEvents(t.app.store.db, [{ jobId: job.id, type: 'test.step', data: { n: 1 } }], new Date());
    let streams = 0;
    const forgetful = spyFetch(async (request) => {
      if (request.headers.accept !== 'text/event-stream') return undefined;
      streams++;
      const { 'last-event-id': _forgotten, ...headers } = request.headers;
      const response = await fetch(request.url, { headers, signal: request.signal });
      // The first stream ends after both events; the next ones replay the whole transcript.
      return streams === 1
        ? new Response(cutAfterEvents(response.body!, 2), { status: 200, headers: response.headers })
        : response;
    });
    const follower = createClient({ baseUrl: base, apiKey: p.key, fetch: forgetful.fetch });
    const received: number[] = [];
    const controller = new AbortController();
    for await (const event of follower.followEvents(p.projectId, job.id, {
      signal: controller.signal,
      reconnectDelayMs: 10,
    })) {
      received.push(event.id);
      if (received.length === 2) {
        await appendEvents(
          t.app.store.db,
          [{ jobId: job.id, type: 'test.step', data: { n: 2 } }],
          new Date(),
        );
        await t.app.signals.publish({ kind: 'job-event', jobId: job.id });
      }
      if (received.length === 3) break;
    }
    assert.ok(streams >= 2, 'the stream was opened again');
    assert.deepEqual(
      received,
      (await client.events(p.projectId, job.id)).map((e) => e.id),
    );
  });

  test('followEvents: 404 is thrown at once, not retried', async () => {
    const spy = spyFetch();
    const follower = createClient({ baseUrl: base, apiKey: p.key, fetch: spy.fetch });
    const iterator = follower.followEvents(p.projectId, 'job_01NOSUCHJOB0000000000000000', {
      reconnectDelayMs: 10,
    });
    const error = await failure(iterator.next());
    assert.equal(error.code, 'job-not-found');
    assert.equal(spy.seen.length, 1);
  });

  test('the client loads no server module at run time: its imports of src/ outside src/client are type-only, or of a shared module that imports nothing', () => {
    const dir = path.resolve(import.meta.dirname, '../../src/client');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length >= 5);
    // The retry loop is shared with the server; it imports nothing, so it brings nothing along.
    const shared = new Set(['../retry.ts']);
    const importsOf = (source: string) => [...source.matchAll(/^(import|export)\b[^;]*?from '([^']+)'/gms)];
    for (const file of files) {
      const source = readFileSync(path.join(dir, file), 'utf8');
      for (const [statement, , specifier] of importsOf(source)) {
        if (!specifier!.startsWith('../')) continue;
        if (shared.has(specifier!)) continue;
        assert.match(statement!, /^(import|export) type /, `${file}: ${statement}`);
      }
    }
    for (const module of shared) {
      assert.deepEqual(
        importsOf(readFileSync(path.join(dir, module), 'utf8')),
        [],
        `${module} imports nothing`,
      );
    }
  });
});

/** The body of an event stream cut (with a network error) a few bytes into event number `whole + 1`. */
function cutAfterEvents(body: ReadableStream<Uint8Array>, whole: number): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = '';
  let sent = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        text += decoder.decode(chunk, { stream: true });
        const starts = [...text.matchAll(/^id: /gm)].map((m) => m.index);
        if (starts.length > whole) {
          controller.enqueue(encoder.encode(text.slice(sent, starts[whole]! + 8)));
          controller.error(new TypeError('terminated', { cause: new Error('other side closed') }));
          return;
        }
        controller.enqueue(encoder.encode(text.slice(sent)));
        sent = text.length;
      },
    }),
  );
}

describe('client: waitForJob with a worker', () => {
  let t: TestApp;
  let base: string;
  let p: SeededProject;
  let client: DocwrightClient;
  let worker: Worker;
  const gates = new Map<string, PromiseWithResolvers<void>>();
  const gate = (name: string) => {
    const g = Promise.withResolvers<void>();
    gates.set(name, g);
    return g;
  };
  // The prompt scripts the run: `gate:<name>` waits for the test, `fail` fails, then three steps.
  const runner: Runner = async (_job, run, { signal, emit }) => {
    const held = /^gate:(\S+)/.exec(run.prompt);
    if (held)
      await Promise.race([
        gates.get(held[1]!)!.promise,
        new Promise((r) => signal.addEventListener('abort', r)),
      ]);
    for (const n of [1, 2, 3]) {
      await emit('test.step', { n });
      await sleep(20);
    }
    if (run.prompt.includes('fail'))
      return { status: 'failed', error: { code: 'test-failure', message: 'scripted' } };
    return {
      status: 'completed',
      prLink: 'https://git.example/acme/docs/pull/7',
      branch: 'docwright/x',
      summary: `did ${run.seq}`,
    };
  };
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app, { rateLimit: 1000 });
    base = await t.listen();
    client = createClient({ baseUrl: base, apiKey: p.key });
    worker = new Worker(t.app, { runner, pollMs: 50, cancelCheckMs: 100 });
    worker.start();
  });
  after(async () => {
    await worker.stop(0);
    t.server.server.closeAllConnections();
    await t.close();
  });

  test('ends when the job completes: onUpdate sees active then completed, onEvent every event once, in order', async () => {
    const release = gate('a');
    const job = await client.createJob(p.projectId, { prompt: 'gate:a' });
    const updates: AgentJob[] = [];
    const events: JobEvent[] = [];
    const waiting = client.waitForJob(p.projectId, job.id, {
      onUpdate: (j) => updates.push(j),
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'run.started') release.resolve();
      },
    });
    const done = await waiting;
    assert.equal(done.status, 'completed');
    assert.equal(done.prLink, 'https://git.example/acme/docs/pull/7');
    assert.equal(updates[0]!.status, 'active');
    assert.equal(updates.at(-1)!.status, 'completed');
    assert.deepEqual(updates.at(-1), done);
    const all = await client.events(p.projectId, job.id);
    assert.deepEqual(
      events.map((e) => e.id),
      all.map((e) => e.id),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['job.created', 'run.started', 'test.step', 'test.step', 'test.step', 'job.completed'],
    );
  });

  test('a failed job resolves (it is an answer, not an error); a follow-up makes it active until the next end', async () => {
    const job = await client.createJob(p.projectId, { prompt: 'please fail' });
    const started = Date.now();
    const failed = await client.waitForJob(p.projectId, job.id, { pollIntervalMs: 10_000 });
    assert.ok(
      Date.now() - started < 5_000,
      'the ending event on the stream ends the wait before the next poll',
    );
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.error, { code: 'test-failure', message: 'scripted' });

    const release = gate('b');
    const queued = await client.sendMessage(
      p.projectId,
      job.id,
      { prompt: 'gate:b then succeed' },
      { idempotencyKey: 'm-1' },
    );
    assert.equal(queued.status, 'active');
    assert.deepEqual(
      await client.sendMessage(
        p.projectId,
        job.id,
        { prompt: 'gate:b then succeed' },
        { idempotencyKey: 'm-1' },
      ),
      queued,
      'the replay answers with the original response',
    );
    const seen: string[] = [];
    const lastBefore = (await client.events(p.projectId, job.id)).find((e) => e.type === 'job.message')!.id;
    const done = await client.waitForJob(p.projectId, job.id, {
      eventsAfter: lastBefore,
      onEvent: (e) => {
        seen.push(e.type);
        if (e.type === 'run.started') release.resolve();
      },
    });
    assert.equal(done.status, 'completed');
    assert.equal(done.summary, 'did 2');
    assert.deepEqual(seen, ['run.started', 'test.step', 'test.step', 'test.step', 'job.completed']);
  });

  test('without the event stream (refused), polling alone still ends the wait and delivers every event', async () => {
    const noStream = spyFetch(async (request) =>
      request.headers.accept === 'text/event-stream'
        ? problem(404, { code: 'not-found', detail: 'no such resource' })
        : undefined,
    );
    const polling = createClient({ baseUrl: base, apiKey: p.key, fetch: noStream.fetch });
    // The run waits until the test has seen it start: events must arrive while the job is active.
    const release = gate('d');
    let seenLive = true;
    const fallback = setTimeout(() => {
      seenLive = false;
      release.resolve();
    }, 5_000);
    const job = await polling.createJob(p.projectId, { prompt: 'gate:d' });
    const events: JobEvent[] = [];
    const done = await polling.waitForJob(p.projectId, job.id, {
      pollIntervalMs: 50,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'run.started') release.resolve();
      },
    });
    clearTimeout(fallback);
    assert.equal(done.status, 'completed');
    assert.ok(seenLive, 'run.started was delivered while the job was active');
    assert.ok(
      noStream.seen.some((s) => s.headers.accept === 'text/event-stream'),
      'the stream was tried',
    );
    assert.deepEqual(
      events.map((e) => e.id),
      (await client.events(p.projectId, job.id)).map((e) => e.id),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['job.created', 'run.started', 'test.step', 'test.step', 'test.step', 'job.completed'],
    );
  });

  test('a stalled stream (a buffering proxy): polling sees the end, the JSON list supplies the transcript', async () => {
    const stalled = spyFetch(async (request, _call, real) => {
      if (request.headers.accept !== 'text/event-stream') return undefined;
      const response = await real();
      // Nothing of the stream ever arrives; the body ends when the client lets go of it.
      const body = new ReadableStream<Uint8Array>({ cancel: () => response.body!.cancel() });
      return new Response(body, { status: 200, headers: response.headers });
    });
    const polling = createClient({ baseUrl: base, apiKey: p.key, fetch: stalled.fetch });
    const job = await polling.createJob(p.projectId, { prompt: 'stalled' });
    const events: JobEvent[] = [];
    const done = await polling.waitForJob(p.projectId, job.id, {
      pollIntervalMs: 50,
      onEvent: (e) => events.push(e),
    });
    assert.equal(done.status, 'completed');
    assert.ok(
      stalled.seen.some((s) => s.headers.accept === 'text/event-stream'),
      'the stream was opened',
    );
    assert.deepEqual(
      events.map((e) => e.id),
      (await client.events(p.projectId, job.id)).map((e) => e.id),
    );
    assert.equal(events.at(-1)!.type, 'job.completed');
  });

  test('the signal stops waiting (the job runs on); archiving ends the wait with the archived job', async () => {
    gate('c');
    const job = await client.createJob(p.projectId, { prompt: 'gate:c' });
    const controller = new AbortController();
    const waiting = client.waitForJob(p.projectId, job.id, { signal: controller.signal });
    await sleep(100);
    const reason = new Error('enough');
    controller.abort(reason);
    await assert.rejects(waiting, (e) => e === reason);
    assert.equal((await client.getJob(p.projectId, job.id)).status, 'active');

    const events: string[] = [];
    const ending = client.waitForJob(p.projectId, job.id, { onEvent: (e) => events.push(e.type) });
    await sleep(100);
    await client.archiveJob(p.projectId, job.id);
    const archived = await ending;
    assert.equal(archived.status, 'archived');
    assert.equal(events.at(-1), 'job.archived');
  });
});
