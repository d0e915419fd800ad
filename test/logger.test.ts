import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../src/logger.ts';
import { processSecrets, SecretRegistry } from '../src/redact.ts';
import { startTestApp } from './helpers/app.ts';

/** A logger whose lines land in the returned array. */
function capture(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createLogger('debug', stream) };
}

test('a secret the process has handled never reaches a log line, whatever carries it', async () => {
  const secret = 'glpat-logSecret_1a2b3c4d5e6f7g8h';
  const { lines, logger } = capture();
  logger.info({ note: `before ${secret}` }, 'not yet known');
  processSecrets.add(secret);
  logger.info({ note: `message with ${secret}` }, `text ${secret}`);
  logger.warn({ err: new Error(`failed with ${secret}`) }, 'an error');
  logger.info({ header: `Basic ${Buffer.from(`oauth2:${secret}`).toString('base64')}` }, 'a header');
  logger.info({ url: `https://someone:${secret}@example.com/x.git` }, 'a url');
  await new Promise((resolve) => setImmediate(resolve));

  assert.ok(lines[0]!.includes(secret), 'only secrets the process knows are redacted');
  const after = lines.slice(1);
  assert.equal(after.length, 4);
  for (const line of after) {
    assert.ok(!line.includes(secret), line);
    assert.doesNotThrow(() => JSON.parse(line), 'still one JSON document per line');
    assert.match(line, /\[redacted\]/);
  }
  assert.ok(!after[2]!.includes(Buffer.from(`oauth2:${secret}`).toString('base64')));
});

test('a registry redacts multi-line secrets in their JSON-escaped form and forgets the oldest beyond capacity', () => {
  const registry = new SecretRegistry();
  const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';
  registry.add(pem, '', 'ab', undefined);
  assert.equal(registry.size, 1, 'empty, short and non-string values are not secrets');
  const line = JSON.stringify({ key: pem });
  assert.equal(registry.redact(line), '{"key":"[redacted]"}');

  for (let i = 0; i < 1000; i++) registry.add(`rotated-token-${i.toString().padStart(4, '0')}`);
  assert.equal(registry.size, 1000);
  assert.ok(registry.redact(line).includes('BEGIN PRIVATE KEY'), 'the oldest secret was forgotten');
  assert.equal(registry.redact('x rotated-token-0999 y'), 'x [redacted] y');
});

test('secrets from the environment (model keys, the database password) are scrubbed once the app opens', async () => {
  const key = 'sk-envKeyForLogs0123456789abcdef';
  const saved = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = key;
  const t = await startTestApp();
  try {
    const { lines, logger } = capture();
    logger.warn({ detail: `the provider said: invalid key ${key}` }, 'model call failed');
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(!lines[0]!.includes(key), lines[0]);
    assert.match(lines[0]!, /invalid key \[redacted\]/);
  } finally {
    await t.close();
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  }
});
