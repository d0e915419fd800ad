import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { type GitHubApi, startGitHubApi } from '../doubles/github-api.ts';
import { reply, type ScriptedServer, startOpenAIServer } from '../doubles/openai-server.ts';
import { createGitRepository } from '../helpers/app.ts';
import {
  ALL_MIGRATIONS,
  createTestDatabase,
  TEST_POSTGRES_URL,
  type TestDatabase,
  testDialect,
} from '../helpers/database.ts';

/**
 * `docwright doctor` as an operator runs it: a real process against an isolated database, a
 * scripted OpenAI-compatible model server, a GitHub API double and a real git smart-HTTP
 * server; judged by exit code, stdout and stderr, and by what the doubles and the database saw.
 */

const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');
const MODEL = 'openai-compatible/scripted';
const MODEL_KEY = 'sk-doctorModelKey0123456789abcdef';
const WRONG_MODEL_KEY = 'sk-doctorWrongKey9876543210fedcba';
const WRITE_TOKEN = 'ghp_doctorWriteToken0123456789abcdefAB';
const READ_TOKEN = 'ghp_doctorReadToken0123456789abcdefABC';
const WRONG_TOKEN = 'ghp_doctorWrongToken0123456789abcdefAB';
const SECRETS = [MODEL_KEY, WRONG_MODEL_KEY, WRITE_TOKEN, READ_TOKEN, WRONG_TOKEN];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  project?: string;
}

interface Report {
  ok: boolean;
  checks: Check[];
}

/** The caller's environment minus anything that would point docwright or a model elsewhere. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(DOCWRIGHT_|ANTHROPIC_|OPENAI_)/.test(name) && name !== 'DATABASE_URL') env[name] = value;
  }
  return env;
}

function run(env: Record<string, string | undefined>, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...baseEnv(), ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs `doctor --json …`; asserts the exit code and that stdout is one well-formed report. */
async function doctor(
  env: Record<string, string | undefined>,
  args: string[],
  code: number,
): Promise<Report> {
  const result = await run(env, ['doctor', '--json', ...args]);
  assert.equal(result.code, code, `exit code (stdout: ${result.stdout}; stderr: ${result.stderr})`);
  assertNoSecrets(result);
  const report = parseReport(result);
  assert.deepEqual(Object.keys(report).sort(), ['checks', 'ok']);
  assert.equal(report.ok, code === 0);
  assert.ok(report.checks.length > 0);
  for (const check of report.checks) {
    const keys = Object.keys(check).sort();
    assert.deepEqual(
      keys,
      check.project === undefined ? ['detail', 'name', 'status'] : ['detail', 'name', 'project', 'status'],
    );
    assert.ok(['ok', 'warn', 'fail'].includes(check.status), check.status);
    assert.equal(typeof check.detail, 'string');
    assert.ok(check.detail.length > 0 && !check.detail.includes('\n'), `one line: ${check.detail}`);
  }
  assert.equal(report.ok, !report.checks.some((c) => c.status === 'fail'), 'ok iff no check failed');
  return report;
}

/** stdout as a report; a run that printed none fails with what it said on stderr. */
function parseReport(result: Run): Report {
  assert.notEqual(result.stdout, '', `a report on stdout (stderr: ${result.stderr})`);
  return JSON.parse(result.stdout) as Report;
}

function assertNoSecrets(result: Pick<Run, 'stdout' | 'stderr'>): void {
  const output = result.stdout + result.stderr;
  for (const secret of SECRETS) {
    for (const form of [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(`x-access-token:${secret}`).toString('base64'),
    ]) {
      assert.ok(!output.includes(form), `output holds no ${secret.slice(0, 10)}…`);
    }
  }
}

/** The one check named `name` (of `project`, or global). */
function find(report: Report, name: string, project?: string): Check {
  const found = report.checks.filter((c) => c.name === name && c.project === project);
  assert.equal(
    found.length,
    1,
    `one ${name} check for ${project ?? 'global'}: ${JSON.stringify(report.checks)}`,
  );
  return found[0]!;
}

function expectCheck(
  report: Report,
  name: string,
  project: string | undefined,
  status: Check['status'],
  detail?: RegExp,
) {
  const check = find(report, name, project);
  assert.equal(check.status, status, `${name} (${project ?? 'global'}): ${check.detail}`);
  if (detail) assert.match(check.detail, detail, `${name} (${project ?? 'global'})`);
  return check;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Creates projects in-process, then closes the database before any child process opens it. */
async function seed(database: TestDatabase, inputs: Record<string, unknown>[]): Promise<string[]> {
  const app = await openApp(loadConfig({ ...database.env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  try {
    const ids: string[] = [];
    for (const input of inputs) ids.push((await app.projects.create(input)).id);
    return ids;
  } finally {
    await app.close();
  }
}

/** The tables of a test database, to show that doctor created none. */
async function tables(database: TestDatabase): Promise<string[]> {
  if (testDialect === 'sqlite') {
    const db = new DatabaseSync(path.join(database.dataDir, 'docwright.db'));
    try {
      return db
        .prepare("select name from sqlite_master where type = 'table'")
        .all()
        .map((r) => String(r.name));
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query(
      'select table_name from information_schema.tables where table_schema = $1',
      [database.schema],
    );
    return rows.map((r) => String(r.table_name));
  } finally {
    await client.end();
  }
}

describe(`docwright doctor (${testDialect})`, () => {
  let model: ScriptedServer;
  let gitServer: GitHttpServer;
  let github: GitHubApi;
  const cleanup: string[] = [];

  before(async () => {
    model = await startOpenAIServer({ apiKey: MODEL_KEY });
    gitServer = await startGitHttpServer({
      tokens: { [WRITE_TOKEN]: 'write', [READ_TOKEN]: 'read' },
      username: 'x-access-token',
    });
    await gitServer.createRepository('octo/docs', { 'index.mdx': '# Docs\n' });
    github = await startGitHubApi({
      tokens: { [WRITE_TOKEN]: { push: true }, [READ_TOKEN]: { push: false } },
    });
    github.addRepo('octo/docs', { branches: ['main'] });
  });
  after(async () => {
    await Promise.all([model.close(), gitServer.close(), github.close()]);
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  });

  const githubProject = (name: string, token: string) => ({
    name,
    repository: `${gitServer.baseUrl}/octo/docs`,
    host: 'github',
    apiUrl: github.baseUrl,
    token,
    ref: 'main',
    model: MODEL,
    openaiCompatibleBaseUrl: model.url,
    openaiCompatibleApiKey: MODEL_KEY,
  });
  const localRepository = () => {
    const dir = createGitRepository();
    cleanup.push(dir);
    return dir;
  };

  describe('a healthy installation', () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    let remoteId: string;
    let localId: string;

    before(async () => {
      database = await createTestDatabase();
      env = {
        ...database.env,
        DOCWRIGHT_MODEL: MODEL,
        DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url,
        DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY: MODEL_KEY,
      };
      const ids = await seed(database, [
        githubProject('GitHub docs', WRITE_TOKEN),
        { name: 'Local docs', repository: localRepository(), checks: ['vale docs'] },
      ]);
      remoteId = ids[0]!;
      localId = ids[1]!;
    });
    after(() => database.drop());

    test('every check passes: exit 0, one JSON report, one minimal model request per distinct endpoint and key', async () => {
      model.push(reply('OK'), reply('OK'));
      const before = model.requests.length;
      const report = await doctor(env, [], 0);
      expectCheck(report, 'configuration', undefined, 'ok', /DOCWRIGHT_MODEL openai-compatible\/scripted/);
      expectCheck(report, 'git', undefined, 'ok', /^git \d+\.\d+/);
      expectCheck(
        report,
        'database',
        undefined,
        'ok',
        testDialect === 'sqlite' ? /^SQLite .*docwright\.db/ : /^PostgreSQL .*schema/,
      );
      expectCheck(report, 'migrations', undefined, 'ok', /up to date/);
      expectCheck(report, 'projects', undefined, 'ok', /2 projects/);
      expectCheck(report, 'secret key', undefined, 'ok', /opens the stored credentials of 1 project/);
      expectCheck(report, 'model', undefined, 'ok', /openai-compatible\/scripted answered in \d+ ms/);
      expectCheck(report, 'host', remoteId, 'ok', /can read and push to octo\/docs/);
      expectCheck(
        report,
        'repository',
        remoteId,
        'ok',
        /^branch main at http:\/\/127\.0\.0\.1:\d+\/octo\/docs/,
      );
      expectCheck(report, 'model', remoteId, 'ok', /answered/);
      expectCheck(report, 'host', localId, 'ok', /branches are pushed to/);
      expectCheck(report, 'repository', localId, 'ok', /^branch main at file:\/\//);
      expectCheck(report, 'model', localId, 'ok', /answered .*\(from DOCWRIGHT_MODEL\)/);
      expectCheck(report, 'check commands', undefined, 'ok', /isolated with bubblewrap/);
      expectCheck(report, 'checks', localId, 'ok', /^1 check command, run with bubblewrap$/);
      assert.ok(
        !report.checks.some((c) => c.name === 'checks' && c.project === remoteId),
        'none without commands',
      );
      assert.equal(report.checks.length, 15);
      // Global and project order: global checks first, then each project's together.
      const firstProject = report.checks.findIndex((c) => c.project !== undefined);
      assert.ok(report.checks.slice(firstProject).every((c) => c.project !== undefined));

      // The global default and the local project share endpoint and key: one request for both.
      const sent = model.requests.slice(before);
      assert.equal(sent.length, 2, 'one request per distinct model, endpoint and key');
      for (const request of sent) {
        assert.equal(request.status, 200);
        assert.equal(request.body.max_tokens, 1, 'one output token');
        assert.equal(request.headers.authorization, `Bearer ${MODEL_KEY}`);
      }
      assert.equal(model.remaining(), 0);
      assert.ok(
        github.requests.some((r) => r.method === 'GET' && r.path === '/repos/octo/docs'),
        'the GitHub API was asked for the repository',
      );
      assert.deepEqual(github.violations, []);
      assert.ok(
        gitServer.requests.some((r) => r.url.includes('/octo/docs.git/info/refs') && r.status === 200),
        'git listed the remote with the credentials',
      );
    });

    test('human output: one line per check with ✓ ! ✗, plain when not a terminal, a summary', async () => {
      model.push(reply('OK'), reply('OK'));
      const result = await run(env, ['doctor']);
      assert.equal(result.code, 0, result.stderr);
      assertNoSecrets(result);
      assert.ok(!result.stdout.includes('\x1b') && !result.stdout.includes('\r'), 'no escapes, no spinner');
      assert.match(result.stdout, /^✓ configuration +valid/m);
      assert.match(result.stdout, /^✓ host +the token can read and push/m);
      assert.match(result.stdout, new RegExp(`^project GitHub docs \\(${remoteId}\\)$`, 'm'));
      assert.match(result.stdout, /^all 15 checks passed$/m);
      assert.doesNotMatch(result.stdout, /^[!✗]/m);
    });

    test('without bubblewrap, check commands are refused (a project with commands fails) unless DOCWRIGHT_CHECKS_UNSANDBOXED=1', async () => {
      // A PATH with git but no bwrap.
      const bin = mkdtempSync(path.join(tmpdir(), 'docwright-doctor-bin-'));
      cleanup.push(bin);
      symlinkSync(
        execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(),
        path.join(bin, 'git'),
      );
      const refused = await doctor({ ...env, PATH: bin }, ['--project', localId, '--skip-model'], 1);
      expectCheck(
        refused,
        'check commands',
        undefined,
        'warn',
        /cannot run: bwrap \(bubblewrap\) is not installed.*DOCWRIGHT_CHECKS_UNSANDBOXED=1/,
      );
      expectCheck(refused, 'checks', localId, 'fail', /^1 check command will be skipped/);
      const allowed = await doctor(
        { ...env, PATH: bin, DOCWRIGHT_CHECKS_UNSANDBOXED: '1' },
        ['--project', localId, '--skip-model'],
        0,
      );
      expectCheck(allowed, 'check commands', undefined, 'warn', /WITHOUT isolation/);
      expectCheck(allowed, 'checks', localId, 'ok', /run without isolation/);
    });

    test('--project checks one project; --skip-model sends no model request', async () => {
      const before = model.requests.length;
      const report = await doctor(env, ['--project', localId, '--skip-model'], 0);
      assert.equal(model.requests.length, before, 'no request with --skip-model');
      assert.deepEqual([...new Set(report.checks.map((c) => c.project).filter(Boolean))], [localId]);
      expectCheck(report, 'model', localId, 'ok', /is configured \(not contacted: --skip-model\)/);
      expectCheck(report, 'model', undefined, 'ok', /not contacted/);
      assert.ok(!report.checks.some((c) => c.name === 'projects'), 'no project count for one project');
    });

    test('--project with an unknown id: a clear error and exit code 2', async () => {
      const result = await run(env, ['doctor', '--json', '--project', 'prj_00000000000000000000000000']);
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /project prj_00000000000000000000000000 does not exist/);
    });

    test('a check that takes longer than --timeout fails on its own and does not hold the command', async () => {
      // The model answers only once the command has ended: nothing depends on the machine's speed
      // but the other checks' (5 s each is plenty for local doubles, under load too).
      let release = () => {};
      model.push({ text: 'OK', until: new Promise<void>((resolve) => (release = resolve)) });
      const requests = model.requests.length;
      const { DOCWRIGHT_MODEL: _unset, ...withoutDefault } = env;
      try {
        const result = await run(withoutDefault, [
          'doctor',
          '--json',
          '--project',
          remoteId,
          '--timeout',
          '5',
        ]);
        assert.equal(result.code, 1, result.stderr);
        const report = parseReport(result);
        expectCheck(report, 'model', remoteId, 'fail', /^no answer within 5 s$/);
        assert.deepEqual(
          report.checks.filter((c) => c.status === 'fail').map((c) => c.name),
          ['model'],
          'nothing else failed',
        );
        const asked = model.requests.slice(requests);
        assert.equal(asked.length, 1, 'the model was asked');
        assert.equal(asked[0]!.served.end, undefined, 'the command ended before the model answered');
      } finally {
        release();
      }
    });
  });

  describe('projects with problems', () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    const ids: Record<string, string> = {};

    before(async () => {
      database = await createTestDatabase();
      // No DOCWRIGHT_MODEL: projects that name no model cannot run jobs.
      env = { ...database.env };
      const gone = localRepository();
      const renamed = localRepository();
      const unreachable = `http://127.0.0.1:${await closedPort()}`;
      const local = (name: string, repository: string, extra: Record<string, unknown> = {}) => ({
        name,
        repository,
        ...extra,
      });
      const names = ['readOnly', 'wrongToken', 'modelAuth', 'modelDown', 'noModel', 'gone', 'renamed'];
      const created = await seed(database, [
        githubProject('Read only', READ_TOKEN),
        githubProject('Wrong token', WRONG_TOKEN),
        local('Wrong model key', localRepository(), {
          model: MODEL,
          openaiCompatibleBaseUrl: model.url,
          openaiCompatibleApiKey: WRONG_MODEL_KEY,
        }),
        local('Model down', localRepository(), { model: MODEL, openaiCompatibleBaseUrl: unreachable }),
        local('No model', localRepository()),
        local('Gone', gone),
        local('Renamed ref', renamed),
      ]);
      names.forEach((name, i) => {
        ids[name] = created[i]!;
      });
      rmSync(gone, { recursive: true, force: true });
      execFileSync('git', ['branch', '-m', 'main', 'trunk'], { cwd: renamed, stdio: 'pipe' });
    });
    after(() => database.drop());

    test('each problem is a failed check with a precise line; exit code 1; no secret in the output', async () => {
      // Read-only and wrong-token projects share model, endpoint and key: one request.
      model.push(reply('OK'));
      const report = await doctor(env, [], 1);

      expectCheck(
        report,
        'host',
        ids.readOnly,
        'fail',
        /^cannot push: the token can read octo\/docs .* but not push to it$/,
      );
      expectCheck(report, 'repository', ids.readOnly, 'ok', /^branch main/);
      expectCheck(report, 'model', ids.readOnly, 'ok', /answered/);

      expectCheck(
        report,
        'host',
        ids.wrongToken,
        'fail',
        /^host-auth-failed: .*credentials were rejected \(401\)/,
      );
      expectCheck(
        report,
        'repository',
        ids.wrongToken,
        'fail',
        /^host-auth-failed: the code host rejected the credentials/,
      );

      expectCheck(
        report,
        'model',
        ids.modelAuth,
        'fail',
        /^model-auth-failed: openai-compatible\/scripted: the model API rejected the credentials \(HTTP 401\).*\(key from the project's OpenAI-compatible key\)$/,
      );
      expectCheck(report, 'host', ids.modelAuth, 'ok');
      expectCheck(
        report,
        'model',
        ids.modelDown,
        'fail',
        /^model-unavailable: openai-compatible\/scripted: could not reach the model API/,
      );

      expectCheck(
        report,
        'model',
        ids.noModel,
        'warn',
        /names no model .* jobs will fail with model-not-configured/,
      );
      expectCheck(report, 'model', undefined, 'warn', /DOCWRIGHT_MODEL is not set: .*model-not-configured/);
      expectCheck(report, 'host', ids.noModel, 'ok');
      expectCheck(report, 'repository', ids.noModel, 'ok');

      expectCheck(report, 'host', ids.gone, 'fail', /is not a git repository/);
      expectCheck(
        report,
        'repository',
        ids.gone,
        'fail',
        /^repository-not-found: the repository is missing or is not a git repository \('.*' does not appear to be a git repository\): was it moved or deleted\? Point the project at it: docwright project update <id> --repository <path-or-url>$/,
      );
      expectCheck(report, 'host', ids.renamed, 'ok');
      expectCheck(
        report,
        'repository',
        ids.renamed,
        'fail',
        /^ref-not-found: "main" is neither a branch nor a tag of file:\/\//,
      );

      assert.equal(
        report.checks.filter((c) => c.status === 'fail').length,
        8,
        JSON.stringify(report.checks.filter((c) => c.status === 'fail')),
      );
      assert.deepEqual(github.violations, []);
    });

    test('--project: only warnings is exit code 0; a failure in that project is exit code 1', async () => {
      const warned = await doctor(env, ['--project', ids.noModel!], 0);
      expectCheck(warned, 'model', ids.noModel, 'warn');
      const failed = await doctor(env, ['--project', ids.readOnly!, '--skip-model'], 1);
      expectCheck(failed, 'host', ids.readOnly, 'fail', /cannot push/);
      assert.ok(failed.checks.every((c) => c.project === undefined || c.project === ids.readOnly));
    });

    test('a secret key that does not open the stored credentials fails, and the projects are not probed with garbage', async () => {
      const report = await doctor(
        { ...env, DOCWRIGHT_SECRET_KEY: 'another-secret-key-0123456789' },
        ['--skip-model'],
        1,
      );
      expectCheck(
        report,
        'secret key',
        undefined,
        'fail',
        /does not open the stored credentials of 3 of 3 projects/,
      );
      expectCheck(report, 'credentials', ids.readOnly, 'fail', /cannot decrypt project secrets/);
      assert.ok(!report.checks.some((c) => c.name === 'host' && c.project === ids.readOnly));
      expectCheck(report, 'host', ids.noModel, 'ok', /branches are pushed/);
    });

    test('without any secret key, stored credentials are reported, and no new key is generated', async () => {
      const keyFile = path.join(database.dataDir, 'secret.key');
      let withoutKey: Record<string, string | undefined>;
      if (testDialect === 'sqlite') {
        renameSync(keyFile, `${keyFile}.away`);
        withoutKey = env;
      } else {
        withoutKey = { ...env, DOCWRIGHT_SECRET_KEY: undefined };
      }
      try {
        const report = await doctor(withoutKey, ['--skip-model'], 1);
        expectCheck(
          report,
          'secret key',
          undefined,
          'fail',
          /the stored credentials of 3 projects cannot be decrypted/,
        );
        expectCheck(
          report,
          'credentials',
          ids.wrongToken,
          'fail',
          /cannot be decrypted without the secret key/,
        );
        if (testDialect === 'sqlite') assert.ok(!existsSync(keyFile), 'doctor wrote no secret.key');
      } finally {
        if (testDialect === 'sqlite') renameSync(`${keyFile}.away`, keyFile);
      }
    });
  });

  describe('installation problems', () => {
    let database: TestDatabase;
    before(async () => {
      database = await createTestDatabase();
    });
    after(() => database.drop());

    test('pending migrations are reported, not applied; after docwright migrate the check passes', async () => {
      if (testDialect === 'sqlite') writeFileSync(path.join(database.dataDir, 'docwright.db'), '');
      const report = await doctor(database.env, [], 0);
      expectCheck(
        report,
        'migrations',
        undefined,
        'warn',
        new RegExp(
          `^${ALL_MIGRATIONS.length} pending migrations \\(${ALL_MIGRATIONS.join(', ')}\\): run docwright migrate`,
        ),
      );
      expectCheck(report, 'database', undefined, 'ok');
      assert.deepEqual(await tables(database), [], 'doctor created no table');

      const migrated = await run(database.env, ['migrate']);
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.ok((await tables(database)).includes('projects'));
      const again = await doctor(database.env, [], 0);
      expectCheck(again, 'migrations', undefined, 'ok', /up to date/);
      expectCheck(again, 'projects', undefined, 'warn', /no projects yet/);
    });

    test('SQLite: a data directory without a database is a warning, and doctor does not create one', async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'docwright-doctor-'));
      cleanup.push(dataDir);
      const report = await doctor({ DOCWRIGHT_DATA_DIR: dataDir }, [], 0);
      expectCheck(
        report,
        'database',
        undefined,
        'warn',
        /^no database at .*docwright\.db yet: run docwright migrate/,
      );
      assert.ok(!existsSync(path.join(dataDir, 'docwright.db')), 'no database file');
      assert.ok(!existsSync(path.join(dataDir, 'secret.key')), 'no secret key file');
    });

    test('an invalid variable fails the configuration check with its message; git is still checked', async () => {
      const report = await doctor({ ...database.env, DOCWRIGHT_RATE_LIMIT: '0' }, [], 1);
      expectCheck(report, 'configuration', undefined, 'fail', /invalid configuration: DOCWRIGHT_RATE_LIMIT/);
      expectCheck(report, 'git', undefined, 'ok');
      assert.deepEqual(report.checks.map((c) => c.name).sort(), ['check commands', 'configuration', 'git']);
    });

    test('an unreachable PostgreSQL fails the database check, without its password', async () => {
      const password = 'doctorDbPassword0123';
      const url = `postgres://docwright:${password}@127.0.0.1:${await closedPort()}/nowhere`;
      const result = await run({ DATABASE_URL: url, DOCWRIGHT_SECRET_KEY: 'test-secret-key-0123456789' }, [
        'doctor',
        '--json',
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.ok(!(result.stdout + result.stderr).includes(password), 'the password is not shown');
      const report = parseReport(result);
      expectCheck(
        report,
        'database',
        undefined,
        'fail',
        /^cannot use the database at 127\.0\.0\.1:\d+\/nowhere .*ECONNREFUSED/,
      );
    });

    test('git missing from PATH, or older than 2.32, fails the git check', async () => {
      const bin = mkdtempSync(path.join(tmpdir(), 'docwright-doctor-bin-'));
      cleanup.push(bin);
      const missing = await doctor({ ...database.env, PATH: bin }, [], 1);
      expectCheck(
        missing,
        'git',
        undefined,
        'fail',
        /^git is not installed or not on PATH \(docwright needs git 2\.32 or newer\)$/,
      );

      writeFileSync(path.join(bin, 'git'), '#!/bin/sh\necho "git version 2.30.9"\n');
      chmodSync(path.join(bin, 'git'), 0o755);
      const old = await doctor({ ...database.env, PATH: bin }, [], 1);
      expectCheck(old, 'git', undefined, 'fail', /^git 2\.30\.9 is too old: docwright needs 2\.32 or newer/);
    });

    test('a model without its key fails even with --skip-model, naming the variable to set', async () => {
      const report = await doctor(
        { ...database.env, DOCWRIGHT_MODEL: 'openai/gpt-test' },
        ['--skip-model'],
        1,
      );
      expectCheck(
        report,
        'model',
        undefined,
        'fail',
        /^model-not-configured: model "openai\/gpt-test" needs an API key: set OPENAI_API_KEY/,
      );
    });

    test('a model endpoint that rejects the key fails with model-auth-failed, naming the variable, not the key', async () => {
      const result = await run(
        {
          ...database.env,
          DOCWRIGHT_MODEL: MODEL,
          DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url,
          DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY: WRONG_MODEL_KEY,
        },
        ['doctor', '--json'],
      );
      assert.equal(result.code, 1, result.stderr);
      assertNoSecrets(result);
      expectCheck(
        parseReport(result),
        'model',
        undefined,
        'fail',
        /^model-auth-failed: .*HTTP 401.*\(key from DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY\)$/,
      );
    });
  });
});
