import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { StreamLimits } from '../../src/config.ts';
import { appendEvents, jobEventJson, toJobEvent } from '../../src/jobs/events.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

/** A raw HTTP request for a job's event stream, on a socket the test controls. */
function rawStream(base: string, path: string, key: string): Promise<Socket> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

const openConnections = async (t: TestApp) => t.server.eventStreams.total;

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Reads a whole SSE response (the server must end it) and returns its messages. */
async function readAll(res: Response): Promise<{ event: string; data: string }[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const lines = block.split('\n');
      const field = (name: string) =>
        lines
          .filter((l) => l.startsWith(`${name}: `))
          .map((l) => l.slice(name.length + 2))
          .join('\n');
      return { event: field('event'), data: field('data') };
    });
}

describe('event streams: backpressure, limits and ends', () => {
  let t: TestApp;
  let p: SeededProject;
  let base: string;
  let bigJob: string;

  before(async () => {
    t = await startTestApp({ env: { DOCWRIGHT_STREAMS_PER_KEY: '3', DOCWRIGHT_STREAMS_PER_PROCESS: '5' } });
    p = await seedProject(t.app);
    base = await t.listen();
    bigJob = (await t.app.jobs.create(p.projectId, { prompt: 'big' })).job.id;
    // 24 MiB of transcript: far more than a socket's buffers hold.
    const chunk = 'x'.repeat(12 * 1024);
    for (let i = 0; i < 8; i++) {
      await appendEvents(
        t.app.store.db,
        Array.from({ length: 256 }, () => ({ jobId: bigJob, type: 'agent.text', data: { text: chunk } })),
        new Date(),
      );
    }
  });
  after(() => t.close());

  test('a client that stops reading is disconnected instead of buffered for, and the server stays responsive', async () => {
    t.app.config.streams.drainTimeoutMs = 400;
    const socket = await rawStream(base, `/v2/agent/${p.projectId}/job/${bigJob}/events`, p.key);
    socket.pause();
    try {
      await until(
        async () => socket.readableLength > 0 || (await openConnections(t)) === 1,
        2_000,
        'the stream',
      );
      const started = Date.now();
      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 200);
      assert.ok(Date.now() - started < 1_000);
      // The server gave up on the reader; the connection is gone on its side.
      await until(async () => (await openConnections(t)) === 0, 5_000, 'the server to drop the reader');
    } finally {
      socket.destroy();
      t.app.config.streams.drainTimeoutMs = 30_000;
    }
  });

  /**
   * Opens a stream of the big transcript whose client does not read, with the stream limits
   * changed to `limits` meanwhile; resolves once the server has dropped the client, with the
   * most the server held unsent for it (the socket's backlog after each write).
   */
  async function unreadStream(limits: Partial<StreamLimits>): Promise<{ mostHeld: number }> {
    const saved = { ...t.app.config.streams };
    Object.assign(t.app.config.streams, limits);
    let mostHeld = 0;
    let writes = 0;
    const watch = (socket: Socket) => {
      const write = socket.write;
      socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
        const result = write.apply(this, args);
        writes++;
        mostHeld = Math.max(mostHeld, this.writableLength);
        return result;
      } as Socket['write'];
    };
    t.server.server.on('connection', watch);
    const socket = await rawStream(base, `/v2/agent/${p.projectId}/job/${bigJob}/events`, p.key);
    socket.pause();
    try {
      await until(async () => writes > 0, 5_000, 'the stream to start');
      await until(async () => (await openConnections(t)) === 0, 10_000, 'the server to drop the reader');
      return { mostHeld };
    } finally {
      t.server.server.off('connection', watch);
      socket.destroy();
      Object.assign(t.app.config.streams, saved);
    }
  }

  test('waiting for the socket to drain, alone (the buffer cap out of reach): the server holds little for a reader that stops, and drops it when its patience runs out', async () => {
    const { mostHeld } = await unreadStream({ maxBufferBytes: 1024 ** 3, drainTimeoutMs: 300 });
    // The transcript is 24 MiB; a producer that did not wait would have queued most of it.
    assert.ok(mostHeld < 1024 * 1024, `the server held ${mostHeld} bytes for a reader that stopped`);
  });

  test('the buffer cap, alone (patience out of reach): a reader that leaves more than the cap unread is dropped', async () => {
    await unreadStream({ maxBufferBytes: 32 * 1024, drainTimeoutMs: 3_600_000 });
  });

  test('a key may hold only so many streams (429 too-many-streams with Retry-After); closing one frees its slot', async () => {
    const path = `/v2/agent/${p.projectId}/job/${bigJob}/events`;
    const controllers = Array.from({ length: 3 }, () => new AbortController());
    const open = await Promise.all(
      controllers.map((c) =>
        fetch(`${base}${path}`, {
          headers: { ...bearer(p.key), accept: 'text/event-stream' },
          signal: c.signal,
        }),
      ),
    );
    for (const res of open) assert.equal(res.status, 200);
    const refused = await fetch(`${base}${path}`, {
      headers: { ...bearer(p.key), accept: 'text/event-stream' },
    });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.equal(((await refused.json()) as { code: string }).code, 'too-many-streams');
    // The JSON list is not a stream and is not limited.
    const list = await fetch(`${base}${path}?limit=1`, { headers: bearer(p.key) });
    assert.equal(list.status, 200);

    controllers[0]!.abort();
    const later = new AbortController();
    await until(
      async () => {
        const again = await fetch(`${base}${path}`, {
          headers: { ...bearer(p.key), accept: 'text/event-stream' },
          signal: later.signal,
        });
        if (again.status !== 200) await again.body?.cancel();
        return again.status === 200;
      },
      3_000,
      'the closed stream to free its slot',
    );
    later.abort();
    for (const c of controllers) c.abort();
  });

  test('the process holds at most its limit of streams, whoever asks', async () => {
    await until(async () => (await openConnections(t)) === 0, 3_000, 'earlier streams to close');
    const others = await Promise.all([1, 2].map(() => t.app.keys.create(p.projectId)));
    const path = `/v2/agent/${p.projectId}/job/${bigJob}/events`;
    const controller = new AbortController();
    const keys = [p.key, p.key, p.key, others[0]!.key, others[0]!.key];
    const open = await Promise.all(
      keys.map((key) =>
        fetch(`${base}${path}`, {
          headers: { ...bearer(key), accept: 'text/event-stream' },
          signal: controller.signal,
        }),
      ),
    );
    for (const res of open) assert.equal(res.status, 200);
    const refused = await fetch(`${base}${path}`, {
      headers: { ...bearer(others[1]!.key), accept: 'text/event-stream' },
    });
    assert.equal(refused.status, 429);
    assert.match(((await refused.json()) as { detail: string }).detail, /as many event streams as it allows/);
    controller.abort();
  });

  test('a stream ends with an end message once the job has ended and its last event is out', {
    timeout: 15_000,
  }, async () => {
    await until(async () => (await openConnections(t)) === 0, 3_000, 'earlier streams to close');
    const created = (await t.app.jobs.create(p.projectId, { prompt: 'short' })).job;
    const path = `/v2/agent/${p.projectId}/job/${created.id}/events`;
    const live = fetch(`${base}${path}`, { headers: { ...bearer(p.key), accept: 'text/event-stream' } });
    const res = await live;
    assert.equal(res.status, 200);
    // The job ends while the stream is open.
    await t.app.jobs.archive(p.projectId, created.id);
    await t.app.signals.publish({ kind: 'job-event', jobId: created.id });
    const messages = await readAll(res);
    assert.deepEqual(
      messages.map((m) => m.event),
      ['job.created', 'job.archived', 'end'],
    );
    assert.deepEqual(JSON.parse(messages.at(-1)!.data), { status: 'archived' });

    // Opened after the end: the transcript, then the end at once.
    const replay = await fetch(`${base}${path}`, {
      headers: { ...bearer(p.key), accept: 'text/event-stream' },
    });
    assert.deepEqual(
      (await readAll(replay)).map((m) => m.event),
      ['job.created', 'job.archived', 'end'],
    );
  });
});

test('an event streamed from its row is the same JSON document as the JSON list gives', () => {
  const row = {
    id: 7,
    job_id: 'job_x',
    run_id: null,
    type: 'agent.text',
    data: JSON.stringify({ text: 'a "quoted" \n line', n: [1, { b: null }] }),
    created_at: '2026-11-23T10:00:00.000Z',
  };
  assert.deepEqual(JSON.parse(jobEventJson(row)), toJobEvent(row));
});
