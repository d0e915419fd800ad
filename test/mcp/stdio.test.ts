// `docwright mcp` over stdio, driven line by line as a broken or hostile client would: what is
// not a JSON-RPC message is answered with a JSON-RPC error (-32700, -32600) and the server keeps
// serving; a line longer than the limit is answered and dropped as it arrives, never held.
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { MAX_DEPTH, MAX_LINE_BYTES, StdioTransport } from '../../src/mcp/stdio-transport.ts';
import { cleanEnv } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');

interface Answer {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

describe('docwright mcp: stdio lines that are not messages', () => {
  let child: ChildProcessWithoutNullStreams;
  const answers: Answer[] = [];
  let exited: number | null | undefined;
  let nextId = 100;

  before(async () => {
    child = spawn(process.execPath, [BIN, 'mcp'], {
      env: {
        ...cleanEnv(),
        // No tool is called: the server is never reached.
        DOCWRIGHT_URL: 'http://127.0.0.1:9',
        DOCWRIGHT_API_KEY: `dwk_${'a'.repeat(40)}`,
        DOCWRIGHT_PROJECT: 'prj_01hzzzzzzzzzzzzzzzzzzzzzzz',
      },
    });
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) answers.push(JSON.parse(line) as Answer);
    });
    child.on('exit', (code) => {
      exited = code;
    });
    await call('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'stdio-test', version: '1.0.0' },
    });
    write('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  });
  after(async () => {
    child.stdin.end();
    await waitFor(() => exited !== undefined, { message: 'the server exits when stdin ends' });
    assert.equal(exited, 0);
  });

  const write = (line: string) =>
    new Promise<void>((resolve, reject) =>
      child.stdin.write(`${line}\n`, (e) => (e ? reject(e) : resolve())),
    );

  /** The next answer after `from` that matches. */
  const answer = (from: number, match: (a: Answer) => boolean, what: string) =>
    waitFor(() => answers.slice(from).find(match), { message: what });

  /** A request that must be answered: the server still serves. */
  async function call(method: string, params: object = {}): Promise<Answer> {
    const id = nextId++;
    const from = answers.length;
    await write(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return answer(from, (a) => a.id === id, `an answer to ${method} #${id}`);
  }

  /** Sends `line`, returns the error it is answered with, and checks that the server still serves. */
  async function refused(line: string | (() => Promise<void>)): Promise<Answer> {
    const from = answers.length;
    if (typeof line === 'string') await write(line);
    else await line();
    const error = await answer(from, (a) => a.error !== undefined, 'an error answer');
    assert.deepEqual(
      answers.slice(from).filter((a) => a.error),
      [error],
      'exactly one answer',
    );
    assert.deepEqual((await call('ping')).result, {}, 'the server keeps serving');
    assert.equal(exited, undefined, 'the server is still running');
    return error;
  }

  test('a line that is not JSON gets -32700, without an id', async () => {
    const error = await refused('this is not JSON {');
    assert.equal(error.error?.code, -32700);
    assert.ok(!('id' in error));
  });

  test('JSON that is not a JSON-RPC message gets -32600, with its id when it has one', async () => {
    assert.deepEqual(await refused('{"jsonrpc":"2.0","id":7}'), {
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32600,
        message: 'invalid request: not a JSON-RPC 2.0 request, notification or response',
      },
    });
    for (const line of [
      '[{"jsonrpc":"2.0","id":8,"method":"ping"}]',
      '42',
      '{"jsonrpc":"1.0","method":"ping"}',
    ]) {
      const error = await refused(line);
      assert.equal(error.error?.code, -32600, line);
      assert.ok(!('id' in error), line);
    }
  });

  test('params nested 3,000 deep get -32600 with the request’s id; MAX_DEPTH deep is served', async () => {
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const error = await refused(
      `{"jsonrpc":"2.0","id":"deep","method":"tools/list","params":${nested(3000)}}`,
    );
    assert.deepEqual(error, {
      jsonrpc: '2.0',
      id: 'deep',
      error: { code: -32600, message: `message nested deeper than ${MAX_DEPTH} levels` },
    });
    // The message object itself is one level: params may nest MAX_DEPTH - 1 more.
    const from = answers.length;
    await write(
      `{"jsonrpc":"2.0","id":"ok","method":"ping","params":{"_meta":{},"x":${nested(MAX_DEPTH - 2)}}}`,
    );
    assert.deepEqual((await answer(from, (a) => a.id === 'ok', 'the ping')).result, {});
  });

  test('a 64 MiB line (the SDK’s transport ended the session past 10 MiB) gets -32600 and the session goes on', async () => {
    const error = await refused(async () => {
      // In 1 MiB writes, none of which ends the line.
      const piece = `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"${'x'.repeat(1024 * 1024)}`;
      for (let i = 0; i < 64; i++) await write_(i === 0 ? piece : 'y'.repeat(1024 * 1024));
      await write('"}}');
    });
    assert.deepEqual(error, {
      jsonrpc: '2.0',
      error: { code: -32600, message: `message longer than ${MAX_LINE_BYTES} bytes` },
    });
  });

  /** Writes without the newline that ends a line. */
  const write_ = (text: string) =>
    new Promise<void>((resolve, reject) => child.stdin.write(text, (e) => (e ? reject(e) : resolve())));
});

test('a line over the limit is answered as soon as it passes it, and none of the rest is held', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new StdioTransport({ input, output, maxLineBytes: 1000 });
  const received: unknown[] = [];
  transport.onmessage = (message) => received.push(message);
  await transport.start();
  const answers: string[] = [];
  output.setEncoding('utf8').on('data', (text: string) => answers.push(text));

  input.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
  let held = 0;
  for (let i = 0; i < 100; i++) {
    input.write('x'.repeat(999));
    held = Math.max(held, transport.heldBytes);
  }
  assert.ok(held <= 1000, `held ${held} bytes`);
  assert.equal(transport.heldBytes, 0, 'the line is dropped once past the limit');
  assert.deepEqual(
    answers.map((a) => JSON.parse(a)),
    [{ jsonrpc: '2.0', error: { code: -32600, message: 'message longer than 1000 bytes' } }],
  );
  // The rest of the long line, then a message that fits: only that one is read.
  input.write('"}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  assert.deepEqual(received, [{ jsonrpc: '2.0', id: 2, method: 'ping' }]);
  assert.equal(answers.length, 1);
  await transport.close();
});
