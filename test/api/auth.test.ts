import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checksum, generateKey, hashKey, isWellFormedKey } from '../../src/keys/key-format.ts';
import { bearer, type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';

describe('key format', () => {
  test('dwk_ + 32 base62 + 6-character base62 CRC32 of the random part', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const key = generateKey();
      assert.match(key, /^dwk_[0-9A-Za-z]{38}$/);
      assert.equal(key.slice(36), checksum(key.slice(4, 36)));
      assert.ok(isWellFormedKey(key));
      seen.add(key);
    }
    assert.equal(seen.size, 200);
  });

  test('a changed character, wrong prefix or length fails the offline check', () => {
    const key = generateKey();
    const flipped = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
    for (const bad of [
      flipped,
      key.replace('dwk_', 'dwx_'),
      key.slice(0, -1),
      `${key}0`,
      key.toUpperCase(),
      '',
    ]) {
      assert.equal(isWellFormedKey(bad), false, bad);
    }
  });

  test('the checksum is CRC32 (known vector) in base62', () => {
    // CRC32("123456789") is 0xCBF43926 (the standard check value); base62 computed independently here.
    let n = 0xcbf43926;
    let expected = '';
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    while (n > 0) {
      expected = alphabet[n % 62] + expected;
      n = Math.floor(n / 62);
    }
    assert.equal(checksum('123456789'), expected.padStart(6, '0'));
    assert.equal(hashKey('x'), '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881');
  });
});

describe('authentication matrix (docs/api/authentication.mdx)', () => {
  let t: TestApp;
  let now = new Date('2026-01-01T00:00:00.000Z');
  let a: SeededProject;
  let b: SeededProject;
  let jobId: string;
  before(async () => {
    t = await startTestApp({ now: () => now });
    a = await seedProject(t.app);
    b = await seedProject(t.app);
    const res = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${a.projectId}/job`,
      headers: bearer(a.key),
      payload: { prompt: 'x' },
    });
    jobId = res.json().id;
  });
  after(() => t.close());

  const getJob = (headers: Record<string, string>, projectId = a.projectId, id = jobId) =>
    t.server.inject({ method: 'GET', url: `/v2/agent/${projectId}/job/${id}`, headers });

  test('401 for no, malformed, bad-checksum and unknown keys, with WWW-Authenticate', async () => {
    const good = a.key;
    const badChecksum = good.slice(0, -1) + (good.at(-1) === '0' ? '1' : '0');
    const cases: [string, Record<string, string>][] = [
      ['no header', {}],
      ['not bearer', { authorization: `Basic ${Buffer.from(`x:${good}`).toString('base64')}` }],
      ['bearer without key', { authorization: 'Bearer ' }],
      ['malformed', bearer('dwk_short')],
      ['another prefix', bearer(good.replace('dwk_', 'sk_x'))],
      ['bad checksum', bearer(badChecksum)],
      ['unknown (well formed)', bearer(generateKey())],
    ];
    for (const [name, headers] of cases) {
      const res = await getJob(headers);
      assert.equal(res.statusCode, 401, name);
      assert.equal(res.json().code, 'unauthorized', name);
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="docwright"', name);
      assert.ok(!JSON.stringify(res.json()).includes(good), `${name}: the key is not echoed`);
    }
    // Scheme is case-insensitive (RFC 9110).
    assert.equal((await getJob({ authorization: `bearer ${good}` })).statusCode, 200);
  });

  test('401 before anything else: no body parsing, no project lookup', async () => {
    const res = await t.server.inject({
      method: 'POST',
      url: '/v2/agent/prj_unknown/job',
      headers: { 'content-type': 'text/plain' },
      payload: 'x'.repeat(300 * 1024),
    });
    assert.equal(res.statusCode, 401);
  });

  test("403 for a valid key on another project's path; 404 for an unknown project or job", async () => {
    const other = await getJob(bearer(b.key));
    assert.equal(other.statusCode, 403);
    assert.equal(other.json().code, 'forbidden');
    const create = await t.server.inject({
      method: 'POST',
      url: `/v2/agent/${a.projectId}/job`,
      headers: bearer(b.key),
      payload: { prompt: 'x' },
    });
    assert.equal(create.statusCode, 403);
    const unknownProject = await getJob(bearer(a.key), 'prj_00000000000000000000000000');
    assert.equal(unknownProject.statusCode, 404);
    assert.equal(unknownProject.json().code, 'project-not-found');
    const unknownJob = await getJob(bearer(a.key), a.projectId, 'job_00000000000000000000000000');
    assert.equal(unknownJob.json().code, 'job-not-found');
    // B's key cannot see A's job even by its id under B's path.
    const cross = await getJob(bearer(b.key), b.projectId, jobId);
    assert.equal(cross.statusCode, 404);
  });

  test('expired and revoked keys are 401; last-used time is recorded', async () => {
    const expiring = await t.app.keys.create(a.projectId, { expiresAt: new Date(now.getTime() + 60_000) });
    assert.equal((await getJob(bearer(expiring.key))).statusCode, 200);
    const listed = (await t.app.keys.list(a.projectId)).find((k) => k.id === expiring.id)!;
    assert.equal(listed.lastUsedAt, now.toISOString());
    assert.equal(listed.display, `dwk_…${expiring.key.slice(-4)}`);
    now = new Date(now.getTime() + 60_000);
    const expired = await getJob(bearer(expiring.key));
    assert.equal(expired.statusCode, 401);
    assert.match(expired.json().detail, /expired/);

    const revocable = await t.app.keys.create(a.projectId, { name: 'ci' });
    assert.equal((await getJob(bearer(revocable.key))).statusCode, 200);
    const revoked = await t.app.keys.revoke(revocable.id);
    assert.equal(revoked.revokedAt, now.toISOString());
    const after = await getJob(bearer(revocable.key));
    assert.equal(after.statusCode, 401);
    assert.match(after.json().detail, /revoked/);
    assert.equal((await getJob(bearer(a.key))).statusCode, 200, 'other keys of the project still work');
  });

  test('keys are stored only as SHA-256 hashes', async () => {
    const rows = await t.app.store.db.selectFrom('api_keys').selectAll().execute();
    for (const row of rows) {
      assert.match(row.hash, /^[0-9a-f]{64}$/);
      assert.ok(!Object.values(row).some((v) => typeof v === 'string' && v.startsWith('dwk_')));
    }
    assert.ok(rows.some((r) => r.hash === hashKey(a.key)));
  });
});
