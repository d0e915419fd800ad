import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type App, openApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { DocwrightError } from '../../src/errors.ts';
import { createLogger } from '../../src/logger.ts';
import { CURRENT_PARAMS, hashPassword, needsRehash, parseHash } from '../../src/operators/passwords.ts';
import { migrationStatus } from '../../src/store/migrations.ts';
import { tampered } from '../helpers/app.ts';
import { ALL_MIGRATIONS, createTestDatabase, type TestDatabase, testDialect } from '../helpers/database.ts';

const PASSWORD = 'correct horse battery staple';
const OTHER_PASSWORD = 'another long passphrase';

const hashPattern = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** The DocwrightError `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<DocwrightError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DocwrightError, `a DocwrightError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
}

describe(`operators and sessions (${testDialect})`, () => {
  let database: TestDatabase;
  let app: App;
  let clock = new Date('2030-01-01T00:00:00.000Z');
  const advance = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };

  before(async () => {
    database = await createTestDatabase();
    app = await openApp(loadConfig({ ...database.env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
      now: () => clock,
    });
  });
  after(async () => {
    await app.close();
    await database.drop();
  });

  const storedRow = (email: string) =>
    app.store.db.selectFrom('operators').selectAll().where('email', '=', email).executeTakeFirstOrThrow();

  test('the migration is recorded; doctor sees nothing pending', async () => {
    const status = await migrationStatus(app.store.db, app.store.dialect, database.schema);
    assert.deepEqual(status, {
      applied: ALL_MIGRATIONS,
      pending: [],
    });
  });

  test('create: a usr_ id, the e-mail lower-cased, no hash in the view, a scrypt hash stored', async () => {
    const created = await app.operators.create({ email: '  Alice@Example.COM ', password: PASSWORD });
    assert.match(created.id, /^usr_[0-9a-hjkmnp-tv-z]{26}$/);
    assert.deepEqual(Object.keys(created).sort(), [
      'createdAt',
      'disabledAt',
      'email',
      'id',
      'lastSignInAt',
      'updatedAt',
    ]);
    assert.equal(created.email, 'alice@example.com');
    assert.equal(created.disabledAt, null);
    assert.equal(created.lastSignInAt, null);
    assert.equal(created.createdAt, clock.toISOString());

    const row = await storedRow('alice@example.com');
    const match = hashPattern.exec(row.password_hash);
    assert.ok(match, `hash format: ${row.password_hash.slice(0, 30)}…`);
    assert.deepEqual(
      { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]) },
      { ...CURRENT_PARAMS },
    );
    assert.equal(Buffer.from(match[4]!, 'base64url').length, 16, 'a 16-byte salt');
    assert.equal(Buffer.from(match[5]!, 'base64url').length, 32, 'a 32-byte hash');
    assert.ok(!row.password_hash.includes(PASSWORD));
    assert.equal(needsRehash(row.password_hash), false);
  });

  test('the same password hashes differently each time (per-hash salt)', async () => {
    const [a, b] = await Promise.all([hashPassword(PASSWORD), hashPassword(PASSWORD)]);
    assert.notEqual(parseHash(a).salt.toString('hex'), parseHash(b).salt.toString('hex'));
    assert.notEqual(a, b);
  });

  test('verify: right password in any case of the e-mail; sign-in time recorded', async () => {
    advance(1000);
    const verified = await app.operators.verify('ALICE@example.com', PASSWORD);
    assert.equal(verified.email, 'alice@example.com');
    assert.equal(verified.lastSignInAt, clock.toISOString());
    assert.equal((await storedRow('alice@example.com')).last_sign_in_at, clock.toISOString());
  });

  test('verify: wrong password and unknown e-mail fail alike, after the same work', async () => {
    const timed = async (email: string, password: string) => {
      const started = performance.now();
      const error = await failure(app.operators.verify(email, password));
      return { error, ms: performance.now() - started };
    };
    // The first check also starts the hashing thread; only warm checks are compared.
    await timed('alice@example.com', 'warming up the thread');
    const wrong = await timed('alice@example.com', 'not the right password');
    const unknown = await timed('nobody@example.com', PASSWORD);
    const malformed = await timed('not an email', PASSWORD);
    for (const { error } of [wrong, unknown, malformed]) {
      assert.equal(error.code, 'unauthorized');
      assert.equal(error.message, wrong.error.message);
      assert.ok(!error.message.includes('nobody'), 'the message names no account');
    }
    // An unknown account still costs a full scrypt (hundreds of ms), not a bare lookup
    // (about 1 ms): the ratio is far from either side of this bound.
    assert.ok(unknown.ms > wrong.ms * 0.3, `unknown ${unknown.ms} ms vs wrong ${wrong.ms} ms`);
    assert.ok(malformed.ms > wrong.ms * 0.3, `malformed ${malformed.ms} ms vs wrong ${wrong.ms} ms`);
  });

  test('a duplicate e-mail, in any case, is refused clearly', async () => {
    const error = await failure(
      app.operators.create({ email: 'ALICE@EXAMPLE.COM', password: OTHER_PASSWORD }),
    );
    assert.equal(error.code, 'operator-exists');
    assert.equal(error.message, 'an operator with the email alice@example.com already exists');
    assert.deepEqual(error.fields, [{ field: 'email', message: 'is already taken' }]);
    assert.equal((await app.operators.list()).length, 1);
  });

  test('password policy and e-mail validation: precise messages, nothing stored', async () => {
    const cases: [string, string, string, string][] = [
      ['short@example.com', 'elevenchars', 'password', 'password must be at least 12 characters (it has 11)'],
      ['space@example.com', ' '.repeat(12), 'password', 'password must not be only whitespace'],
      // 11 emoji are 22 UTF-16 units but 11 characters.
      [
        'emoji@example.com',
        '🔑'.repeat(11),
        'password',
        'password must be at least 12 characters (it has 11)',
      ],
      ['long@example.com', 'x'.repeat(1025), 'password', 'password must be at most 1024 characters'],
      ['no-at-sign', PASSWORD, 'email', 'email must be an address such as name@example.com'],
      ['   ', PASSWORD, 'email', 'email must not be empty'],
      ['a b@example.com', PASSWORD, 'email', 'email must be an address such as name@example.com'],
    ];
    for (const [email, password, field, message] of cases) {
      const error = await failure(app.operators.create({ email, password }));
      assert.equal(error.code, 'invalid-request', email);
      assert.equal(error.message, message, email);
      assert.equal(error.fields?.[0]?.field, field, email);
    }
    assert.deepEqual(
      (await app.operators.list()).map((o) => o.email),
      ['alice@example.com'],
    );
    // Exactly 12 characters, emoji counted as one each, passes.
    const ok = await app.operators.create({ email: 'emoji@example.com', password: '🔑'.repeat(12) });
    assert.equal((await app.operators.verify('emoji@example.com', '🔑'.repeat(12))).id, ok.id);
  });

  test('an old-parameter hash verifies, and is upgraded to the current parameters', async () => {
    const old = await hashPassword(PASSWORD, { N: 2 ** 14, r: 8, p: 1 });
    assert.equal(needsRehash(old), true);
    const at = clock.toISOString();
    await app.store.db
      .insertInto('operators')
      .values({
        id: 'usr_01hzzzzzzzzzzzzzzzzzzzzzzz',
        email: 'legacy@example.com',
        password_hash: old,
        created_at: at,
        updated_at: at,
        last_sign_in_at: null,
        disabled_at: null,
      })
      .execute();
    await failure(app.operators.verify('legacy@example.com', OTHER_PASSWORD));
    assert.equal(
      (await storedRow('legacy@example.com')).password_hash,
      old,
      'a failed sign-in upgrades nothing',
    );

    await app.operators.verify('legacy@example.com', PASSWORD);
    const upgraded = (await storedRow('legacy@example.com')).password_hash;
    assert.notEqual(upgraded, old);
    assert.deepEqual(parseHash(upgraded).params, { ...CURRENT_PARAMS });
    await app.operators.verify('legacy@example.com', PASSWORD);
    await failure(app.operators.verify('legacy@example.com', OTHER_PASSWORD));
  });

  test('hashes with unknown algorithms or parameters are rejected with a clear error', async () => {
    const valid = await hashPassword(PASSWORD, { N: 2 ** 10, r: 8, p: 1 });
    const [, , salt, hash] = valid.split('$');
    const cases: [string, RegExp][] = [
      [`argon2id$v=19$m=65536,t=3,p=4$${salt}$${hash}`, /algorithm "argon2id" \(only scrypt is known\)/],
      [`scrypt$N=1000,r=8,p=1$${salt}$${hash}`, /N=1000 \(a power of two/],
      [`scrypt$N=${2 ** 24},r=8,p=1$${salt}$${hash}`, /N=16777216/],
      [`scrypt$N=1024,r=0,p=1$${salt}$${hash}`, /r=0/],
      [`scrypt$N=1024,r=8,p=99$${salt}$${hash}`, /p=99/],
      [`scrypt$N=1024,r=8,p=1,x=2$${salt}$${hash}`, /expected scrypt\$N=…,r=…,p=…\$salt\$hash/],
      [`scrypt$N=1024,r=8,p=1$${salt}`, /expected scrypt/],
    ];
    for (const [stored, message] of cases) {
      assert.throws(
        () => parseHash(stored),
        (e: unknown) =>
          e instanceof DocwrightError &&
          e.code === 'internal-error' &&
          /^unsupported password hash in the database: /.test(e.message) &&
          message.test(e.message),
        stored,
      );
    }
    // Through the service: the operator cannot sign in, and the error says why.
    await app.store.db
      .updateTable('operators')
      .set({ password_hash: cases[0]![0] })
      .where('email', '=', 'legacy@example.com')
      .execute();
    const error = await failure(app.operators.verify('legacy@example.com', PASSWORD));
    assert.equal(error.code, 'internal-error');
    assert.match(error.message, /argon2id/);
  });

  test('sessions: the token is returned once, stored only as its SHA-256', async () => {
    const alice = await app.operators.verify('alice@example.com', PASSWORD);
    const { token, session } = await app.sessions.create(alice.id);
    assert.match(token, /^dws_[A-Za-z0-9_-]{43}$/);
    assert.equal(session.operatorId, alice.id);
    assert.match(session.csrfSecret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(session.expiresAt, new Date(clock.getTime() + 12 * 3_600_000).toISOString());

    const rows = await app.store.db.selectFrom('sessions').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.id, createHash('sha256').update(token).digest('hex'));
    assert.ok(!JSON.stringify(rows).includes(token.slice(4)), 'no row holds the token');

    const resolved = await app.sessions.resolve(token);
    assert.equal(resolved?.operator.id, alice.id);
    assert.equal(resolved?.operator.email, 'alice@example.com');
    assert.equal(resolved?.session.csrfSecret, session.csrfSecret);
    assert.ok(!('password_hash' in (resolved?.operator ?? {})));
    assert.ok(!('passwordHash' in (resolved?.operator ?? {})));

    assert.equal(await app.sessions.resolve(tampered(token)), undefined);
    assert.equal(await app.sessions.resolve('garbage'), undefined);
    assert.equal(await app.sessions.resolve(''), undefined);
    await app.sessions.revoke(token);
  });

  test('sessions: last seen at most once a minute; expired sessions stop resolving', async () => {
    const alice = (await app.operators.list()).find((o) => o.email === 'alice@example.com')!;
    const createdAt = clock.toISOString();
    const { token } = await app.sessions.create(alice.id, { ttlMs: 10 * 60_000 });
    const lastSeen = async () =>
      (await app.store.db.selectFrom('sessions').select('last_seen_at').executeTakeFirstOrThrow())
        .last_seen_at;

    advance(30_000);
    assert.equal((await app.sessions.resolve(token))?.session.lastSeenAt, createdAt);
    assert.equal(await lastSeen(), createdAt, 'not written within the minute');

    advance(31_000);
    const seen = clock.toISOString();
    assert.equal((await app.sessions.resolve(token))?.session.lastSeenAt, seen);
    assert.equal(await lastSeen(), seen, 'written after a minute');

    advance(10 * 60_000 - 61_000 - 1);
    assert.ok(await app.sessions.resolve(token), 'alive a millisecond before expiry');
    advance(1);
    assert.equal(await app.sessions.resolve(token), undefined, 'expired');

    // Signing in again clears the expired session.
    const fresh = await app.sessions.create(alice.id);
    const ids = await app.store.db.selectFrom('sessions').select('id').execute();
    assert.deepEqual(
      ids.map((r) => r.id),
      [createHash('sha256').update(fresh.token).digest('hex')],
    );
    await app.sessions.revoke(fresh.token);
  });

  test('sessions: revoke one, revoke all; disabling and password changes end sessions', async () => {
    const alice = (await app.operators.list()).find((o) => o.email === 'alice@example.com')!;
    const one = await app.sessions.create(alice.id);
    const two = await app.sessions.create(alice.id);
    await app.sessions.revoke(one.token);
    await app.sessions.revoke(one.token); // idempotent
    assert.equal(await app.sessions.resolve(one.token), undefined);
    assert.ok(await app.sessions.resolve(two.token), 'the other session lives on');

    await app.sessions.create(alice.id);
    assert.equal(await app.sessions.revokeAll(alice.id), 2);
    assert.equal(await app.sessions.resolve(two.token), undefined);

    // A password change ends every session; the old password stops working.
    const before = await app.sessions.create(alice.id);
    advance(1000);
    const changed = await app.operators.changePassword('Alice@Example.com', OTHER_PASSWORD);
    assert.equal(changed.updatedAt, clock.toISOString());
    assert.equal(await app.sessions.resolve(before.token), undefined);
    assert.equal((await failure(app.operators.verify('alice@example.com', PASSWORD))).code, 'unauthorized');
    await app.operators.verify('alice@example.com', OTHER_PASSWORD);
    const weak = await failure(app.operators.changePassword('alice@example.com', 'short'));
    assert.match(weak.message, /at least 12 characters/);
    const missing = await failure(app.operators.changePassword('nobody@example.com', OTHER_PASSWORD));
    assert.equal(missing.code, 'not-found');
    assert.equal(missing.message, 'no operator has the email nobody@example.com');

    // Disabling ends sessions, refuses sign-in with the usual message, and is idempotent.
    const live = await app.sessions.create(alice.id);
    const disabled = await app.operators.disable('alice@example.com');
    assert.equal(disabled.disabledAt, clock.toISOString());
    assert.equal(await app.sessions.resolve(live.token), undefined);
    const refused = await failure(app.operators.verify('alice@example.com', OTHER_PASSWORD));
    assert.equal(refused.message, 'the email or password is not correct');
    advance(1000);
    assert.equal((await app.operators.disable('alice@example.com')).disabledAt, disabled.disabledAt);
    // A session that somehow outlives the disabling (created afterwards) does not resolve.
    const late = await app.sessions.create(alice.id);
    assert.equal(await app.sessions.resolve(late.token), undefined);
    assert.equal((await failure(app.operators.disable('nobody@example.com'))).code, 'not-found');
  });

  test('createFirst: only when no operator exists; concurrent calls create one', async () => {
    const fresh = await createTestDatabase();
    const other = await openApp(loadConfig({ ...fresh.env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
    });
    try {
      const results = await Promise.all([
        other.operators.createFirst({ email: 'admin@localhost', password: PASSWORD }),
        other.operators.createFirst({ email: 'Admin@Localhost', password: PASSWORD }),
        other.operators.createFirst({ email: 'admin@localhost', password: PASSWORD }),
      ]);
      assert.equal(results.filter(Boolean).length, 1, 'exactly one call created the account');
      assert.deepEqual(
        (await other.operators.list()).map((o) => o.email),
        ['admin@localhost'],
      );
      assert.equal(
        await other.operators.createFirst({ email: 'second@localhost', password: PASSWORD }),
        undefined,
      );
      assert.equal((await other.operators.list()).length, 1);
      await other.operators.verify('admin@localhost', PASSWORD);
      const weak = await failure(
        other.operators.createFirst({ email: 'admin@localhost', password: 'short' }),
      );
      assert.equal(weak.fields?.[0]?.field, 'password');
    } finally {
      await other.close();
      await fresh.drop();
    }
  });
});
