import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { RequestLogger } from '../../src/http/request-logger.ts';
import { createLogger, type Logger } from '../../src/logger.ts';

/** A logger at `level` whose lines land in the returned array, and how many children it made. */
function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const root = createLogger(level, stream);
  const made = { children: 0 };
  // The root as a request logger sees it, counting the children made of it.
  const logger = Object.create(root, {
    child: {
      value: (...args: Parameters<Logger['child']>) => {
        made.children++;
        return root.child(...args);
      },
    },
  }) as Logger;
  return { lines, logger, made };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

test('a request logger builds its child only for a line the level lets through, and binds the request id', async () => {
  const { lines, logger, made } = capture('warn');
  const log = new RequestLogger(logger, { requestId: 'req-7' }, {});
  log.info({ url: '/v2/agent' }, 'request');
  log.debug('details');
  await flush();
  assert.equal(made.children, 0);
  assert.equal(lines.length, 0);
  assert.equal(log.level, 'warn');

  log.warn({ code: 'service-unavailable' }, 'request failed');
  log.error('again');
  await flush();
  assert.equal(made.children, 1, 'one child, made once');
  assert.deepEqual(
    lines.map((l) => [l.requestId, l.msg, l.code]),
    [
      ['req-7', 'request failed', 'service-unavailable'],
      ['req-7', 'again', undefined],
    ],
  );
  // Once made, the child answers every level it logs, and its own children keep the binding.
  log.child({ stream: 'events' }).warn('closed');
  await flush();
  assert.equal(lines.at(-1)!.requestId, 'req-7');
  assert.equal(lines.at(-1)!.stream, 'events');
});

test('at info, a request logger writes request lines with the id', async () => {
  const { lines, logger } = capture('info');
  new RequestLogger(logger, { requestId: 'req-8' }, {}).info({ status: 200 }, 'request');
  await flush();
  assert.deepEqual([lines[0]!.requestId, lines[0]!.status, lines[0]!.msg], ['req-8', 200, 'request']);
});
