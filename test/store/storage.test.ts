// Storage that docwright cannot write, and files nobody else should read (issue 9, findings 7 and
// 10): real `docwright` processes. We run as root in CI, so permission bits alone stop nothing:
// files and directories are made immutable with chattr instead (a loud skip where it cannot be).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { bearer } from '../helpers/app.ts';
import {
  createTestDatabase,
  TEST_POSTGRES_URL,
  type TestDatabase,
  testDialect,
} from '../helpers/database.ts';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.ts';

const _BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');

/** `docwright <args>` as a user runs it; a start that is not refused would serve forever, so a time limit. */
const docwright = (env: Record<string, string>, ...args: string[]) =>
  runCli(args, env, '', { timeoutMs: 30_000 });

const mode = (file: string) => statSync(file).mode & 0o777;

/** Whether `chattr +i` works here (root on a filesystem with the immutable flag); else why not. */
const chattrMissing = (() => {
  const probe = mkdtempSync(path.join(tmpdir(), 'docwright-chattr-'));
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'pipe' });
    execFileSync('chattr', ['-i', probe], { stdio: 'pipe' });
    return false;
  } catch (error) {
    return `SKIPPED LOUDLY: chattr +i is not supported here (${(error as Error).message.split('\n')[0]}); read-only storage is untested`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

const onlySqlite =
  testDialect === 'sqlite' ? false : 'SQLite files only (PostgreSQL keeps no data files of ours)';
const chattr = (flag: '+i' | '-i', target: string) =>
  execFileSync('chattr', [flag, target], { stdio: 'pipe' });

/** Log lines (JSON) of a server process whose message matches. */
const logLines = (server: ServerProcess, message: RegExp) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; level: number; database?: string })
    .filter((entry) => message.test(entry.msg));

/**
 * What a server whose database refuses writes must do: start, log which database and why, answer
 * /readyz and API calls with 503 problems (never 500), and let its worker back off.
 */
async function expectNotReady(server: ServerProcess, key: string, projectId: string, location: RegExp) {
  const ready = await fetch(`${server.url}/readyz`);
  assert.equal(ready.status, 503);
  assert.equal(ready.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.equal(((await ready.json()) as { code: string }).code, 'service-unavailable');
  assert.deepEqual(
    await (await fetch(`${server.url}/healthz`)).json(),
    { status: 'ok' },
    'alive all the same',
  );
  const logged = logLines(server, /^not ready: the database .* accepts no writes/);
  assert.ok(logged.length >= 1, server.output());
  assert.match(logged[0]!.msg, location);

  for (const [method, url, body] of [
    ['POST', `/v2/agent/${projectId}/job`, { prompt: 'Fix the typo' }],
    ['GET', `/v2/agent/${projectId}/jobs`, undefined],
  ] as const) {
    const response = await fetch(`${server.url}${url}`, {
      method,
      headers: { ...bearer(key), ...(body && { 'content-type': 'application/json' }) },
      body: body && JSON.stringify(body),
    });
    assert.equal(response.status, 503, `${method} ${url}: ${await response.clone().text()}`);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.ok(response.headers.get('retry-after'), 'Retry-After');
  }

  // The worker backs off: attempts 1, 2, 4 … s apart, not one a second (the claim poll).
  await new Promise((resolve) => setTimeout(resolve, 7_500));
  // So does the webhook dispatcher, which claims deliveries the same way.
  for (const what of ['claim', 'webhook claim']) {
    const claims = logLines(server, new RegExp(`^${what} failed; retrying in \\d+ s$`));
    assert.ok(claims.length >= 3 && claims.length <= 5, `${claims.length} ${what} attempts in 7.5 s`);
    assert.deepEqual(
      claims.slice(0, 3).map((c) => c.msg),
      [1, 2, 4].map((s) => `${what} failed; retrying in ${s} s`),
    );
  }
}

describe(`storage on ${testDialect}`, () => {
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  const temporary = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docwright-storage-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  test('the data directory is created 0700; docwright.db, its -wal/-shm and secret.key 0600', {
    skip: onlySqlite,
  }, async () => {
    const dataDir = path.join(temporary(), 'nested', 'data');
    const env = { DOCWRIGHT_DATA_DIR: dataDir };
    const server = await startServerProcess(env);
    cleanups.push(() => server.stop());
    // Before any other process opens them: the server's open connection keeps the journal files.
    assert.equal(mode(dataDir).toString(8), '700');
    for (const name of ['docwright.db', 'docwright.db-wal', 'docwright.db-shm']) {
      assert.equal(mode(path.join(dataDir, name)).toString(8), '600', name);
    }
    // A credential makes the embedded default generate its secret key.
    const repo = path.join(temporary(), 'repo');
    execFileSync('git', ['init', '-q', repo]);
    const tokenFile = path.join(temporary(), 'token');
    writeFileSync(tokenFile, 'glpat-0123456789abcdefghij\n');
    const created = await docwright(
      env,
      'project',
      'create',
      '--name',
      'Docs',
      '--repository',
      repo,
      '--token-file',
      tokenFile,
    );
    assert.equal(created.code, 0, created.stderr);
    assert.equal(mode(path.join(dataDir, 'secret.key')).toString(8), '600', 'secret.key');
    await server.stop();
  });

  test('files an earlier version left world-readable are narrowed to 0600 when docwright opens them', {
    skip: onlySqlite,
  }, async () => {
    const dataDir = temporary();
    const env = { DOCWRIGHT_DATA_DIR: dataDir };
    assert.equal((await docwright(env, 'migrate')).code, 0);
    const file = path.join(dataDir, 'docwright.db');
    chmodSync(file, 0o644);
    writeFileSync(path.join(dataDir, 'secret.key'), 'an-old-generated-secret-key-0123456789\n', {
      mode: 0o644,
    });
    assert.equal((await docwright(env, 'project', 'list')).code, 0);
    assert.equal(mode(file).toString(8), '600');
    assert.equal(mode(path.join(dataDir, 'secret.key')).toString(8), '600');
  });

  describe('an immutable docwright.db', { skip: onlySqlite || chattrMissing }, () => {
    let server: ServerProcess;
    let dataDir: string;
    let key: string;
    let projectId: string;

    before(async () => {
      dataDir = temporary();
      const env = { DOCWRIGHT_DATA_DIR: dataDir };
      const repo = path.join(temporary(), 'repo');
      execFileSync('git', ['init', '-q', repo]);
      const created = await docwright(
        env,
        'project',
        'create',
        '--name',
        'Docs',
        '--repository',
        repo,
        '--json',
      );
      projectId = JSON.parse(created.stdout).id;
      key = JSON.parse((await docwright(env, 'key', 'create', '--project', projectId, '--json')).stdout).key;
      chattr('+i', path.join(dataDir, 'docwright.db'));
      cleanups.push(() => chattr('-i', path.join(dataDir, 'docwright.db')));
      server = await startServerProcess(env);
      cleanups.push(() => server.stop());
    });

    test('the server starts but is not ready, says which file, answers 503 problems, and its worker backs off', async () => {
      const file = path.join(dataDir, 'docwright.db').replaceAll('.', '\\.');
      await expectNotReady(
        server,
        key,
        projectId,
        new RegExp(
          `^not ready: the database ${file} accepts no writes \\(attempt to write a readonly database\\): make the file and its directory writable`,
        ),
      );
    });
  });

  test('an unwritable data directory stops serve and the CLI with the path and what to do', {
    skip: onlySqlite || chattrMissing,
  }, async () => {
    const parent = temporary();
    const dataDir = path.join(parent, 'data');
    mkdirSync(dataDir);
    chattr('+i', dataDir);
    cleanups.push(() => chattr('-i', dataDir));
    const message = `docwright: cannot write the data directory ${dataDir} (EPERM): docwright keeps its SQLite database there. Make it writable by this user, or set DOCWRIGHT_DATA_DIR to a directory that is (or DATABASE_URL to use PostgreSQL).\n`;
    for (const args of [['serve', '--port', '0'], ['project', 'list'], ['migrate']]) {
      const result = await docwright({ DOCWRIGHT_DATA_DIR: dataDir }, ...args);
      assert.equal(result.code, 1, `${args[0]}: ${result.stderr}`);
      assert.equal(result.stderr, message, args[0]);
    }
    // Also when the directory cannot even be created.
    chattr('-i', dataDir);
    chattr('+i', parent);
    cleanups.push(() => chattr('-i', parent));
    const below = path.join(parent, 'not-yet', 'data');
    const result = await docwright({ DOCWRIGHT_DATA_DIR: below }, 'project', 'list');
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp(`^docwright: cannot write the data directory ${below.replaceAll('.', '\\.')} \\(E`),
    );
  });

  describe('a PostgreSQL role that may only read (a standby, or a role made read-only)', {
    skip: testDialect === 'postgres' ? false : 'a PostgreSQL scenario (run with DOCWRIGHT_TEST_DB=postgres)',
  }, () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let key: string;
    let projectId: string;
    const role = `ro_${randomBytes(5).toString('hex')}`;

    before(async () => {
      database = await createTestDatabase();
      cleanups.push(() => database.drop());
      const repo = path.join(temporary(), 'repo');
      execFileSync('git', ['init', '-q', repo]);
      const created = await docwright(
        database.env,
        'project',
        'create',
        '--name',
        'Docs',
        '--repository',
        repo,
        '--json',
      );
      assert.equal(created.code, 0, created.stderr);
      projectId = JSON.parse(created.stdout).id;
      key = JSON.parse(
        (await docwright(database.env, 'key', 'create', '--project', projectId, '--json')).stdout,
      ).key;
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      try {
        await admin.query(`create role ${role} login`);
        await admin.query(`alter role ${role} set default_transaction_read_only = on`);
        await admin.query(`grant usage on schema ${database.schema} to ${role}`);
        await admin.query(`grant all on all tables in schema ${database.schema} to ${role}`);
        await admin.query(`grant all on all sequences in schema ${database.schema} to ${role}`);
      } finally {
        await admin.end();
      }
      cleanups.push(async () => {
        const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
        await client.connect();
        await client.query(`drop owned by ${role}`).catch(() => {});
        await client.query(`drop role if exists ${role}`).catch(() => {});
        await client.end();
      });
      const url = new URL(TEST_POSTGRES_URL);
      url.username = role;
      server = await startServerProcess({ ...database.env, DATABASE_URL: url.href });
      cleanups.push(() => server.stop());
    });

    test('the server starts but is not ready, says which database, answers 503 problems, and its worker backs off', async () => {
      await expectNotReady(
        server,
        key,
        projectId,
        new RegExp(
          `^not ready: the database [\\w.]+:\\d+/\\w+ \\(schema ${database.schema}\\) accepts no writes \\(transaction_read_only is on\\): point DATABASE_URL at the primary server`,
        ),
      );
    });
  });
});
