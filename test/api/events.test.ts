import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appendEvents } from '../../src/jobs/events.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

interface SseEvent {
  id: string;
  event: string;
  data: { id: number; type: string; data: unknown };
}

/** Opens an SSE stream and yields parsed events; `close()` ends it. */
async function openStream(url: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { ...headers, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const received: SseEvent[] = [];
  return {
    received,
    /** Reads until `count` events have arrived in total (fails after 5 s). */
    async until(count: number): Promise<SseEvent[]> {
      const deadline = setTimeout(() => controller.abort(), 5_000);
      try {
        while (received.length < count) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const fields: Record<string, string> = Object.fromEntries(
              block
                .split('\n')
                .filter((l) => !l.startsWith(':'))
                .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]),
            );
            if (fields.data) {
              received.push({
                id: fields.id ?? '',
                event: fields.event ?? '',
                data: JSON.parse(fields.data),
              });
            }
            end = buffer.indexOf('\n\n');
          }
        }
      } finally {
        clearTimeout(deadline);
      }
      return received;
    },
    close: () => controller.abort(),
  };
}

describe('job events: JSON and Server-Sent Events', () => {
  let t: TestApp;
  let p: SeededProject;
  let base: string;
  let jobId: string;
  const emit = async (type: string) => {
    await appendEvents(t.app.store.db, [{ jobId, type, data: { type } }], new Date());
    await t.app.signals.publish({ kind: 'job-event', jobId });
  };
  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
    base = await t.listen();
    jobId = (await t.app.jobs.create(p.projectId, { prompt: 'x' })).job.id;
  });
  after(() => t.close());

  test('the stream replays the transcript, then delivers new events live', async () => {
    const stream = await openStream(`${base}/v2/agent/${p.projectId}/job/${jobId}/events`, bearer(p.key));
    try {
      const [first] = await stream.until(1);
      assert.equal(first!.event, 'job.created');
      assert.equal(first!.id, String(first!.data.id));
      await emit('agent.step');
      await emit('agent.done');
      const all = await stream.until(3);
      assert.deepEqual(
        all.map((e) => e.event),
        ['job.created', 'agent.step', 'agent.done'],
      );
    } finally {
      stream.close();
    }
  });

  test('reconnecting with Last-Event-ID resumes after that event; ?after= does the same', async () => {
    const { events } = (
      await t.server.inject({
        method: 'GET',
        url: `/v2/agent/${p.projectId}/job/${jobId}/events`,
        headers: bearer(p.key),
      })
    ).json() as { events: { id: number; type: string }[] };
    assert.deepEqual(
      events.map((e) => e.type),
      ['job.created', 'agent.step', 'agent.done'],
    );
    await emit('agent.later');
    const resumed = await openStream(`${base}/v2/agent/${p.projectId}/job/${jobId}/events`, {
      ...bearer(p.key),
      'last-event-id': String(events[1]!.id),
    });
    try {
      assert.deepEqual(
        (await resumed.until(2)).map((e) => e.event),
        ['agent.done', 'agent.later'],
      );
    } finally {
      resumed.close();
    }
    const after = await openStream(
      `${base}/v2/agent/${p.projectId}/job/${jobId}/events?after=${events[2]!.id}`,
      bearer(p.key),
    );
    try {
      assert.deepEqual(
        (await after.until(1)).map((e) => e.event),
        ['agent.later'],
      );
    } finally {
      after.close();
    }
  });

  test('a bad Last-Event-ID is a 400; streams are authorized like everything else', async () => {
    const bad = await fetch(`${base}/v2/agent/${p.projectId}/job/${jobId}/events`, {
      headers: { ...bearer(p.key), accept: 'text/event-stream', 'last-event-id': 'abc' },
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { code: string }).code, 'invalid-request');
    // The query is checked as sent, as without a stream: no stream opens on a bad one.
    for (const query of ['limit=1&limit=1', 'limit=0', 'after=-1', 'after=1&after=2', 'since=3']) {
      const refused = await fetch(`${base}/v2/agent/${p.projectId}/job/${jobId}/events?${query}`, {
        headers: { ...bearer(p.key), accept: 'text/event-stream' },
      });
      assert.equal(refused.status, 400, query);
      assert.equal(((await refused.json()) as { code: string }).code, 'invalid-request', query);
    }
    const anonymous = await fetch(`${base}/v2/agent/${p.projectId}/job/${jobId}/events`, {
      headers: { accept: 'text/event-stream' },
    });
    assert.equal(anonymous.status, 401);
    const missing = await fetch(`${base}/v2/agent/${p.projectId}/job/job_00000000000000000000000000/events`, {
      headers: { ...bearer(p.key), accept: 'text/event-stream' },
    });
    assert.equal(missing.status, 404);
  });
});
