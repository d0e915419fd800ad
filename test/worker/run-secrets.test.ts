// A run's secrets (src/pipeline/run-secrets.ts): a GitHub App key is redacted line by line (a model
// may copy it with other line breaks), a secret is found in its encoded forms, a short one is
// redacted but not looked for in files (it would match words), and the environment's secrets a
// run knows are the service keys, not the database or first operator's password.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { serviceSecrets } from '../../src/environment-secrets.ts';
import { RunSecrets } from '../../src/pipeline/run-secrets.ts';

test('a PEM key copied with other line breaks is still redacted, line by line', () => {
  const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string;
  const body = pem.split('\n').filter((line) => line && !line.startsWith('-----'));
  const secrets = new RunSecrets([pem]);
  const copied = `key: ${body.join(' ')}`;
  const redacted = secrets.redact(copied);
  for (const line of body) assert.ok(!redacted.includes(line), `${line} is left in ${redacted}`);
  assert.ok(secrets.secretsIn(copied).length > 0, 'found in a file as well');
});

test('found raw, base64 and URL-encoded; a short secret is redacted but not looked for in files', () => {
  const token = 'ghp_runSecretsToken0123456789abcdef';
  const secrets = new RunSecrets([token, 'pass']);
  assert.deepEqual(secrets.secretsIn(`a ${token} b`), [token]);
  assert.deepEqual(secrets.secretsIn(Buffer.from(`x-access-token:${token}`).toString('base64')), [token]);
  assert.deepEqual(secrets.secretsIn(encodeURIComponent(`${token}/`)), [token]);
  assert.deepEqual(secrets.secretsIn('a password, a passage'), [], 'four characters match words');
  assert.equal(secrets.redact('the pass is pass'), 'the [redacted] is [redacted]');
});

test('the diff keeps example URLs as they are; text loses their userinfo', () => {
  const secrets = new RunSecrets(['ghp_runSecretsToken0123456789abcdef']);
  const example = 'DATABASE_URL=postgres://app:example@db/app';
  assert.equal(secrets.redactShown(example), example);
  assert.equal(secrets.redact(example), 'DATABASE_URL=postgres://[redacted]@db/app');
});

test('the environment gives a run its service keys, not the passwords of common words', () => {
  const env = {
    ANTHROPIC_API_KEY: 'sk-ant-a',
    OPENAI_API_KEY: 'sk-o',
    DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY: 'c',
    DOCWRIGHT_SECRET_KEY: 'sealing-key-0123456789',
    DOCWRIGHT_SLACK_BOT_TOKEN: 'xoxb-1',
    DOCWRIGHT_SLACK_SIGNING_SECRET: 'signing',
    DOCWRIGHT_ADMIN_PASSWORD: 'administrator',
    DATABASE_URL: 'postgres://postgres:postgres@localhost/docwright',
    DOCWRIGHT_MODEL: 'openai/gpt-test',
  };
  assert.deepEqual(serviceSecrets(env), [
    'sk-ant-a',
    'sk-o',
    'c',
    'sealing-key-0123456789',
    'xoxb-1',
    'signing',
  ]);
});
