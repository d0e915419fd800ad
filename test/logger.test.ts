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

test('request log lines of a real server carry no credential: not from the Authorization header, not from the query', async () => {
  const t = await startTestApp();
  const { startServerProcess } = await import('./helpers/process.ts');
  const { seedProject } = await import('./helpers/app.ts');
  const p = await seedProject(t.app);
  const server = await startServerProcess(t.database.env, ['--no-worker']);
  // Credentials of other kinds than ours, which no shape-based scrubber recognises: a client
  // that sends the wrong scheme, or another service's token, must not see it logged either.
  const basic = `Basic ${Buffer.from('someone:correct-horse-battery').toString('base64')}`;
  const foreign = 'token glpat-notOurs_0a1b2c3d4e5f';
  try {
    const list = `${server.url}/v2/agent/${p.projectId}/jobs`;
    assert.equal((await fetch(list, { headers: { authorization: `Bearer ${p.key}` } })).status, 200);
    await fetch(`${list}?status=active&api_key=${p.key}&${p.key}&password=hunter2-not-a-key`);
    await fetch(`${server.url}/nowhere?token=${encodeURIComponent(p.key)}`, {
      headers: { authorization: `Bearer ${p.key}` },
    });
    assert.equal((await fetch(list, { headers: { authorization: basic } })).status, 401);
    assert.equal((await fetch(list, { headers: { authorization: foreign } })).status, 401);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"request"'));
    assert.equal(lines.length, 5, server.output());
    for (const line of server.output().split('\n')) {
      for (const secret of [p.key.slice(4), 'hunter2', basic.slice(6), 'correct-horse', 'glpat-notOurs'])
        assert.ok(!line.includes(secret), line);
    }
    // A request line says what was asked and how it went, and carries no header at all.
    for (const line of lines) {
      assert.deepEqual(Object.keys(JSON.parse(line)).sort(), [
        'level',
        'method',
        'ms',
        'msg',
        'requestId',
        'service',
        'status',
        'time',
        'url',
      ]);
    }
    assert.match(lines[1]!, /jobs\?status=active&api_key=\[redacted\]&\[redacted\]&password=\[redacted\]/);
    assert.match(lines[2]!, /nowhere\?token=\[redacted\]/);
  } finally {
    await server.stop('SIGKILL');
    await t.close();
  }
});

test('the logger blanks authorization, token, key and password fields wherever a log call puts them', async () => {
  const { lines, logger } = capture();
  logger.info(
    {
      authorization: 'Basic c29tZW9uZTpwYXNz',
      req: { headers: { authorization: 'token abc-def-ghi' } },
      headers: { authorization: 'token jkl-mno-pqr' },
      token: 'opaque-token-1',
      project: { token: 'opaque-token-2', apiKey: 'opaque-key-3' },
      password: 'opaque-password-4',
    },
    'a careless call',
  );
  await new Promise((resolve) => setImmediate(resolve));
  for (const value of [
    'c29tZW9uZTpwYXNz',
    'abc-def-ghi',
    'jkl-mno-pqr',
    'opaque-token',
    'opaque-key',
    'opaque-password',
  ])
    assert.ok(!lines[0]!.includes(value), `${value} in ${lines[0]}`);
  assert.equal(JSON.parse(lines[0]!).authorization, '[redacted]');
});

test('text shaped like a docwright credential is redacted even when the process never held it', () => {
  const registry = new SecretRegistry();
  const key = `dwk_${'A1b2C3d4'.repeat(4)}Zz9Yy8`;
  const session = `dws_${'x'.repeat(43)}`;
  const webhook = `whsec_${'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'}`;
  const out = registry.redact(`k=${key} s=${session} w=${webhook} dwk_short`);
  assert.equal(out, 'k=[redacted] s=[redacted] w=[redacted] dwk_short');
});
