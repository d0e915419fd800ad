import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type App, openApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import type { OperatorView } from '../../src/operators/operators.ts';
import { createTestDatabase, type TestDatabase, testDialect } from '../helpers/database.ts';
import { startServerProcess } from '../helpers/process.ts';

/**
 * `docwright user …` as an operator runs it: real processes on an isolated database, judged
 * by exit code, stdout, stderr and what the database then holds. Every password used here is
 * collected, and no output of any process may contain one.
 */

const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');
const STDIN_PASSWORD = 'stdin-passphrase-7f3a9c';
const FILE_PASSWORD = 'file passphrase 2b8e41d';
const FLAG_PASSWORD = 'flag-passphrase-c0ffee99';
const RESET_PASSWORD = 'reset-passphrase-51d2aa';
const ADMIN_PASSWORD = 'admin-passphrase-93ab7e';
const WEAK_PASSWORD = 'weak-9c1';
const PASSWORDS = [
  STDIN_PASSWORD,
  FILE_PASSWORD,
  FLAG_PASSWORD,
  RESET_PASSWORD,
  ADMIN_PASSWORD,
  WEAK_PASSWORD,
];
const VIEW_KEYS = ['createdAt', 'disabledAt', 'email', 'id', 'lastSignInAt', 'updatedAt'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Everything every process of this file printed, scanned for passwords at the end. */
const outputs: string[] = [];

function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('DOCWRIGHT_') && name !== 'DATABASE_URL') env[name] = value;
  }
  return env;
}

function run(env: Record<string, string>, args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...baseEnv(), DOCWRIGHT_LOG_LEVEL: 'debug', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        outputs.push(stdout, stderr);
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin!.end(stdin ?? '');
  });
}

function json<T>(result: Run): T {
  assert.equal(result.code, 0, `exit code (stderr: ${result.stderr})`);
  return JSON.parse(result.stdout);
}

function assertFails(result: Run, message: RegExp, what: string): void {
  assert.notEqual(result.code, 0, `${what} should fail (stdout: ${result.stdout})`);
  assert.equal(result.code, 2, `${what}: a usage error`);
  assert.equal(result.stdout, '', `${what} prints nothing on stdout`);
  assert.match(result.stderr, message, what);
}

/** An operator as `--json` prints it: exactly the view's fields, nothing hash-like. */
function assertOperatorShape(operator: OperatorView, email: string): void {
  assert.deepEqual(Object.keys(operator).sort(), VIEW_KEYS);
  assert.equal(operator.email, email);
  assert.match(operator.id, /^usr_[0-9a-z]{26}$/);
  assert.ok(!JSON.stringify(operator).includes('scrypt'), 'no hash');
}

/** Opens the database in-process for one check, and closes it (SQLite locks, see cli.test.ts). */
async function withDatabase<T>(env: Record<string, string>, fn: (app: App) => Promise<T>): Promise<T> {
  const app = await openApp(loadConfig({ ...env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

describe(`docwright user (${testDialect})`, () => {
  const databases: TestDatabase[] = [];
  const fresh = async () => {
    const database = await createTestDatabase();
    databases.push(database);
    return database;
  };
  let database: TestDatabase;
  let env: Record<string, string>;
  const docwright = (args: string[], stdin?: string) => run(env, args, stdin);

  before(async () => {
    database = await fresh();
    env = database.env;
  });
  after(async () => {
    for (const d of databases) await d.drop();
  });

  test('user create --password-stdin: --json prints the operator, without the hash', async () => {
    const created = json<OperatorView>(
      await docwright(
        ['user', 'create', '--email', 'Stdin@Example.com', '--password-stdin', '--json'],
        `${STDIN_PASSWORD}\n`,
      ),
    );
    assertOperatorShape(created, 'stdin@example.com');
    // The trailing newline of `echo` is not part of the password.
    const verified = await withDatabase(env, (app) =>
      app.operators.verify('stdin@example.com', STDIN_PASSWORD),
    );
    assert.equal(verified.id, created.id);
  });

  test('user create --password-file: one final newline dropped, inner spaces kept', async () => {
    // Outside the data directory, whose files are scanned for passwords at the end.
    const dir = mkdtempSync(path.join(tmpdir(), 'docwright-password-'));
    const file = path.join(dir, 'password.txt');
    writeFileSync(file, `${FILE_PASSWORD}\n`);
    const result = await docwright([
      'user',
      'create',
      '--email',
      'file@example.com',
      '--password-file',
      file,
    ]);
    rmSync(dir, { recursive: true });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^created operator usr_[0-9a-z]{26} \(file@example\.com\)\n$/);
    await withDatabase(env, async (app) => {
      await app.operators.verify('file@example.com', FILE_PASSWORD);
      await assert.rejects(app.operators.verify('file@example.com', `${FILE_PASSWORD}\n`));
    });
  });

  test('a password given as a flag value is refused, and not echoed', async () => {
    const cases: string[][] = [
      ['--password', FLAG_PASSWORD],
      [`--password=${FLAG_PASSWORD}`],
      ['--password'],
    ];
    const results = await Promise.all(
      cases.map((flags) => docwright(['user', 'create', '--email', 'flag@example.com', ...flags, '--json'])),
    );
    for (const [i, result] of results.entries()) {
      assertFails(
        result,
        /not accepted on the command line.*--password-file <path> or --password-stdin/,
        cases[i]!.join(' '),
      );
      assert.ok(!result.stderr.includes(FLAG_PASSWORD), 'the value is not echoed');
    }
    const none = await docwright(['user', 'create', '--email', 'flag@example.com']);
    assertFails(none, /give the password with --password-file <path> or --password-stdin/, 'no password');
    const both = await docwright(
      ['user', 'create', '--email', 'flag@example.com', '--password-stdin', '--password-file', BIN],
      FLAG_PASSWORD,
    );
    assertFails(both, /either --password-file or --password-stdin, not both/, 'both sources');
    const emails = await withDatabase(env, async (app) => (await app.operators.list()).map((o) => o.email));
    assert.deepEqual(emails, ['stdin@example.com', 'file@example.com'], 'nothing was created');
  });

  test('policy and duplicate errors are one line on stderr, exit 2', async () => {
    assertFails(
      await docwright(['user', 'create', '--email', 'weak@example.com', '--password-stdin'], WEAK_PASSWORD),
      /^docwright: password must be at least 12 characters \(it has 8\)\n$/,
      'weak password',
    );
    assertFails(
      await docwright(['user', 'create', '--email', 'STDIN@example.com', '--password-stdin'], STDIN_PASSWORD),
      /^docwright: an operator with the email stdin@example\.com already exists\n$/,
      'duplicate',
    );
    assertFails(
      await docwright(['user', 'create', '--email', 'nope', '--password-stdin'], STDIN_PASSWORD),
      /email must be an address such as name@example\.com/,
      'bad email',
    );
  });

  test('user list, user password, user disable', async () => {
    const listed = json<{ operators: OperatorView[] }>(await docwright(['user', 'list', '--json']));
    assert.deepEqual(
      listed.operators.map((o) => o.email),
      ['stdin@example.com', 'file@example.com'],
    );
    for (const operator of listed.operators) assertOperatorShape(operator, operator.email);

    const changed = json<OperatorView>(
      await docwright(
        ['user', 'password', '--email', 'FILE@example.com', '--password-stdin', '--json'],
        RESET_PASSWORD,
      ),
    );
    assertOperatorShape(changed, 'file@example.com');
    await withDatabase(env, async (app) => {
      await app.operators.verify('file@example.com', RESET_PASSWORD);
      await assert.rejects(app.operators.verify('file@example.com', FILE_PASSWORD));
    });
    assertFails(
      await docwright(
        ['user', 'password', '--email', 'ghost@example.com', '--password-stdin'],
        RESET_PASSWORD,
      ),
      /no operator has the email ghost@example\.com/,
      'unknown account',
    );

    const disabled = json<OperatorView>(
      await docwright(['user', 'disable', '--email', 'file@example.com', '--json']),
    );
    assert.ok(disabled.disabledAt, 'disabledAt is set');
    const human = await docwright(['user', 'list']);
    assert.match(human.stdout, /file@example\.com .* disabled\n/);
    assert.match(human.stdout, /stdin@example\.com .* active\n/);
    await withDatabase(env, (app) =>
      assert.rejects(app.operators.verify('file@example.com', RESET_PASSWORD)),
    );
  });

  test('DOCWRIGHT_ADMIN_PASSWORD: processes starting at once create exactly one admin, once', async () => {
    const db = await fresh();
    const adminEnv = { ...db.env, DOCWRIGHT_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const results = await Promise.all([1, 2, 3].map(() => run(adminEnv, ['user', 'list', '--json'])));
    for (const result of results) {
      const { operators } = json<{ operators: OperatorView[] }>(result);
      assert.deepEqual(
        operators.map((o) => o.email),
        ['admin@localhost'],
      );
    }
    const ids = new Set(
      results.map((r) => (JSON.parse(r.stdout) as { operators: OperatorView[] }).operators[0]!.id),
    );
    assert.equal(ids.size, 1, 'the same account everywhere');
    await withDatabase(db.env, async (app) => {
      assert.equal((await app.operators.list()).length, 1);
      await app.operators.verify('admin@localhost', ADMIN_PASSWORD);
    });
  });

  test('DOCWRIGHT_ADMIN_PASSWORD at serve start: logged by e-mail, never the password; not again', async () => {
    const db = await fresh();
    const adminEnv = {
      ...db.env,
      DOCWRIGHT_ADMIN_EMAIL: 'Root@Example.com',
      DOCWRIGHT_ADMIN_PASSWORD: ADMIN_PASSWORD,
    };
    const first = await startServerProcess({ ...adminEnv, DOCWRIGHT_LOG_LEVEL: 'trace' }, ['--no-worker']);
    await first.stop();
    outputs.push(first.output());
    assert.match(first.output(), /created the first operator account/);
    assert.match(first.output(), /root@example\.com/);

    const second = await startServerProcess({ ...adminEnv, DOCWRIGHT_LOG_LEVEL: 'trace' }, ['--no-worker']);
    await second.stop();
    outputs.push(second.output());
    assert.doesNotMatch(second.output(), /created the first operator account/);
    await withDatabase(db.env, async (app) => {
      assert.deepEqual(
        (await app.operators.list()).map((o) => o.email),
        ['root@example.com'],
      );
      await app.operators.verify('root@example.com', ADMIN_PASSWORD);
    });
  });

  test('a weak DOCWRIGHT_ADMIN_PASSWORD stops the process, naming the variable, not the value', async () => {
    const db = await fresh();
    const result = await run({ ...db.env, DOCWRIGHT_ADMIN_PASSWORD: WEAK_PASSWORD }, ['user', 'list']);
    assertFails(
      result,
      /^docwright: invalid configuration: DOCWRIGHT_ADMIN_PASSWORD must be at least 12 characters/,
      'weak admin password',
    );
    const badEmail = await run(
      { ...db.env, DOCWRIGHT_ADMIN_EMAIL: 'not-an-email', DOCWRIGHT_ADMIN_PASSWORD: ADMIN_PASSWORD },
      ['user', 'list'],
    );
    assertFails(badEmail, /DOCWRIGHT_ADMIN_EMAIL must be an address/, 'bad admin email');
    await withDatabase(db.env, async (app) => assert.equal((await app.operators.list()).length, 0));
  });

  test('no password appears in any output, log, or (SQLite) database file', () => {
    assert.ok(outputs.length > 20, 'outputs were collected');
    const all = outputs.join('\n');
    for (const password of PASSWORDS)
      assert.ok(!all.includes(password), `output holds no ${password.slice(0, 6)}…`);
    if (testDialect !== 'sqlite') return;
    for (const d of databases) {
      for (const file of readdirSync(d.dataDir)) {
        const bytes = readFileSync(path.join(d.dataDir, file));
        for (const password of PASSWORDS) {
          assert.ok(!bytes.includes(password), `${file} holds no ${password.slice(0, 6)}…`);
        }
      }
    }
  });
});
