import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type App, openApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { isWellFormedKey } from '../../src/keys/key-format.ts';
import { type ApiKeyView, DEFAULT_KEY_EXPIRY_DAYS } from '../../src/keys/keys.ts';
import { createLogger } from '../../src/logger.ts';
import type { ProjectView } from '../../src/projects/projects.ts';
import { VERSION } from '../../src/version.ts';
import { createGitRepository } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase, testDialect } from '../helpers/database.ts';

/**
 * The CLI as a user runs it: `node bin/docwright.js …` as a real process on
 * an isolated database, judged only by exit code, stdout, stderr and what
 * ends up in the database.
 */

const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');
const TOKEN = 'secret-token-123';

type CreatedKey = ApiKeyView & { key: string };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The caller's environment minus anything that would point docwright elsewhere. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('DOCWRIGHT_') && name !== 'DATABASE_URL') env[name] = value;
  }
  return env;
}

function run(env: Record<string, string>, args: string[], cwd?: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...baseEnv(), ...env }, cwd, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A successful `--json` run: exit 0 and the whole of stdout is one JSON document. */
function json<T>(result: Run): T {
  assert.equal(result.code, 0, `exit code (stderr: ${result.stderr})`);
  return JSON.parse(result.stdout);
}

/** A refused command: non-zero exit, nothing on stdout, the expected message on stderr. */
function assertFails(result: Run, message: RegExp, what = ''): void {
  assert.notEqual(result.code, 0, `${what} should fail (stdout: ${result.stdout})`);
  assert.equal(result.stdout, '', `${what} prints nothing on stdout`);
  assert.match(result.stderr, message, what);
}

/** `cases[i]` is `[arguments, expected message]` and `results[i]` its run. */
function assertEachFails(cases: [string[], RegExp][], results: Run[]): void {
  for (const [i, [args, message]] of cases.entries()) assertFails(results[i]!, message, args.join(' '));
}

/** Runs `fn` over `items` with at most `limit` at a time (each item spawns a process). */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

describe(`docwright CLI (${testDialect})`, () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let repository: string;
  const cleanup: string[] = [];
  /** The same database opened in-process, to check what the commands stored. */
  let app: App | undefined;
  const docwright = (...args: string[]) => run(env, args);
  const inProcess = async () => {
    app ??= await openApp(loadConfig({ ...env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
    });
    return app;
  };

  /**
   * Asserts that no file of the SQLite data directory (database, WAL, secret
   * key…) contains `secret`. The in-process connection is closed first:
   * opening and closing the database file in a process that holds SQLite
   * locks on it drops those POSIX locks, and the database gets corrupted.
   */
  const assertNotInDataDir = async (secret: string) => {
    if (testDialect !== 'sqlite') return;
    await app?.close();
    app = undefined;
    for (const file of readdirSync(database.dataDir)) {
      const bytes = readFileSync(path.join(database.dataDir, file));
      assert.ok(!bytes.includes(secret), `${file} holds no plain ${secret.slice(0, 4)}…`);
    }
  };

  before(async () => {
    database = await createTestDatabase();
    env = database.env;
    repository = createGitRepository();
    cleanup.push(repository);
  });
  after(async () => {
    await app?.close();
    await database.drop();
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  });

  test('--help and --version exit 0; an unknown command fails', async () => {
    const help = await docwright('--help');
    assert.equal(help.code, 0);
    for (const command of ['serve', 'migrate', 'project', 'key'])
      assert.match(help.stdout, new RegExp(command));
    const version = await docwright('--version');
    assert.equal(version.code, 0);
    assert.equal(version.stdout.trim(), VERSION);
    const projectHelp = await docwright('project', 'create', '--help');
    assert.equal(projectHelp.code, 0);
    assert.match(projectHelp.stdout, /--repository <url-or-path>/);
    assertFails(await docwright('nope'), /unknown command 'nope'/);
  });

  test('migrate --json reports the migrations it applied, then that there is nothing to apply', async () => {
    // A database of its own, so that nothing has migrated it yet.
    const fresh = await createTestDatabase();
    try {
      const first = json<{ database: string; applied: string[] }>(
        await run(fresh.env, ['migrate', '--json']),
      );
      assert.ok(first.applied.length > 0, 'a fresh database gets every migration');
      assert.ok(first.applied.every((name: unknown) => typeof name === 'string'));
      assert.equal(typeof first.database, 'string');
      const again = json<{ database: string; applied: string[] }>(
        await run(fresh.env, ['migrate', '--json']),
      );
      assert.deepEqual(again, { database: first.database, applied: [] });
      const human = await run(fresh.env, ['migrate']);
      assert.equal(human.code, 0);
      assert.match(human.stdout, /is up to date/);
    } finally {
      await fresh.drop();
    }
  });

  describe('projects', () => {
    let created: ProjectView;

    test('project create --json prints one JSON document with the id and settings, never the token', async () => {
      const result = await docwright(
        'project',
        'create',
        '--name',
        'Docs',
        '--repository',
        repository,
        '--token',
        TOKEN,
        '--draft',
        '--json',
      );
      created = json<ProjectView>(result);
      assert.match(created.id, /^prj_[0-9a-z]{26}$/);
      assert.equal(created.name, 'Docs');
      assert.equal(created.repository, `file://${repository}`);
      assert.equal(created.host, 'local');
      assert.equal(created.ref, 'main', 'the default branch of the repository');
      assert.equal(created.settings.docsDir, '.');
      assert.equal(created.settings.draft, true);
      assert.deepEqual(created.settings.labels, []);
      assert.equal(created.settings.branchPrefix, 'docwright/');
      assert.ok(created.settings.writable.includes('**/*.mdx'));
      assert.deepEqual(created.credentials, { token: true, githubApp: false, modelKeys: [] });
      assert.ok(!result.stdout.includes(TOKEN), 'the token is not printed');
      assert.ok(!result.stderr.includes(TOKEN), 'the token is not logged');
      for (const name of ['token', 'secrets', 'githubPrivateKey']) assert.ok(!(name in created), name);
    });

    test('the token is stored encrypted: not in plain text in projects.secrets nor in the database files', async () => {
      const a = await inProcess();
      const row = await a.store.db
        .selectFrom('projects')
        .select(['secrets'])
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.ok(row.secrets, 'a secret was stored');
      assert.ok(!row.secrets.includes(TOKEN), 'projects.secrets holds no plain token');
      assert.match(JSON.parse(row.secrets).token, /^v1\./, 'sealed with the secret box');
      const everything = JSON.stringify(await a.store.db.selectFrom('projects').selectAll().execute());
      assert.ok(!everything.includes(TOKEN), 'no column holds the plain token');
      // …and it is really there for the worker to use.
      assert.equal((await a.projects.getSecrets(created.id)).token, TOKEN);
      await assertNotInDataDir(TOKEN);
    });

    test('project create without --json prints the project and how to make a key, not the token', async () => {
      const result = await docwright('project', 'create', '--name', 'Other', '--repository', repository);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^id: prj_/m);
      assert.match(result.stdout, /^credentials\.token: false$/m);
      assert.match(result.stdout, /docwright key create --project prj_/);
    });

    test('project list and show', async () => {
      const list = json<{ projects: ProjectView[] }>(await docwright('project', 'list', '--json'));
      assert.deepEqual(Object.keys(list), ['projects']);
      const listed = list.projects.find((p: { id: string }) => p.id === created.id);
      assert.deepEqual(listed, created);
      const table = await docwright('project', 'list');
      assert.equal(table.code, 0);
      assert.match(table.stdout, /^ID\s+NAME\s+HOST\s+REPOSITORY\s+REF$/m);
      assert.match(table.stdout, new RegExp(`^${created.id}\\s+Docs\\s+local\\s+file://\\S+\\s+main$`, 'm'));

      assert.deepEqual(json<ProjectView>(await docwright('project', 'show', created.id, '--json')), created);
      const shown = await docwright('project', 'show', created.id);
      assert.equal(shown.code, 0);
      assert.match(shown.stdout, /^settings\.draft: true$/m);
      assert.ok(!shown.stdout.includes(TOKEN));

      assertFails(
        await docwright('project', 'show', 'prj_00000000000000000000000000', '--json'),
        /project prj_00000000000000000000000000 does not exist/,
      );
    });

    test('project --check sets the check commands (repeatable, whole), show lists them, --clear-checks removes them', async () => {
      assert.deepEqual(created.checks, [], 'none by default');
      const set = json<ProjectView>(
        await docwright(
          'project',
          'update',
          created.id,
          '--check',
          'vale docs',
          '--check',
          'npx mint broken-links --check-anchors, strict',
          '--json',
        ),
      );
      assert.deepEqual(set.checks, ['vale docs', 'npx mint broken-links --check-anchors, strict']);
      const stored = await (await inProcess()).projects.getForRun(created.id);
      assert.deepEqual(stored.project.checks, set.checks, 'what the worker reads for a run');
      const shown = await docwright('project', 'show', created.id);
      assert.match(shown.stdout, /^check: vale docs$/m);
      assert.match(shown.stdout, /^check: npx mint broken-links --check-anchors, strict$/m);
      const renamed = json<ProjectView>(
        await docwright('project', 'update', created.id, '--name', 'Docs', '--json'),
      );
      assert.deepEqual(renamed.checks, set.checks, 'kept when not given');
      assertFails(
        await docwright('project', 'update', created.id, '--check', '   ', '--json'),
        /--check: must not be empty/,
      );
      assertFails(
        await docwright('project', 'update', created.id, '--check', 'a', '--clear-checks'),
        /cannot be used with/,
      );
      const cleared = json<ProjectView>(
        await docwright('project', 'update', created.id, '--clear-checks', '--json'),
      );
      assert.deepEqual(cleared.checks, []);
      assert.match((await docwright('project', 'show', created.id)).stdout, /^checks: -$/m);
      const withChecks = json<ProjectView>(
        await docwright(
          'project',
          'create',
          '--name',
          'Checked',
          '--repository',
          repository,
          '--check',
          'true',
          '--json',
        ),
      );
      assert.deepEqual(withChecks.checks, ['true']);
      await (await inProcess()).projects.delete(withChecks.id);
    });

    test('project update changes the given fields and keeps the rest', async () => {
      const updated = json<ProjectView>(
        await docwright(
          'project',
          'update',
          created.id,
          '--docs-dir',
          'docs',
          '--labels',
          'a,b',
          '--no-draft',
          '--json',
        ),
      );
      assert.equal(updated.settings.docsDir, 'docs');
      assert.deepEqual(updated.settings.labels, ['a', 'b']);
      assert.equal(updated.settings.draft, false);
      assert.equal(updated.name, 'Docs');
      assert.equal(updated.ref, 'main');
      assert.deepEqual(
        updated.credentials,
        { token: true, githubApp: false, modelKeys: [] },
        'the token is kept',
      );
      assert.deepEqual(updated.settings.writable, created.settings.writable);
      assert.ok(updated.updatedAt >= created.updatedAt);
      assert.equal(updated.createdAt, created.createdAt);
      assert.deepEqual(json<ProjectView>(await docwright('project', 'show', created.id, '--json')), updated);

      // An option not given is not reset: --draft/--no-draft have no default.
      const renamed = json<ProjectView>(
        await docwright('project', 'update', created.id, '--name', 'Renamed', '--rate-limit', '5', '--json'),
      );
      assert.equal(renamed.name, 'Renamed');
      assert.equal(renamed.rateLimit, 5);
      assert.equal(renamed.settings.draft, false);
      assert.deepEqual(renamed.settings.labels, ['a', 'b']);

      // A new token replaces the old one, and is no more visible than the first.
      const newToken = 'another-secret-456';
      const tokenFile = path.join(mkdtempSync(path.join(tmpdir(), 'docwright-token-')), 'token');
      cleanup.push(path.dirname(tokenFile));
      writeFileSync(tokenFile, `${newToken}\n`);
      const retoken = await docwright('project', 'update', created.id, '--token-file', tokenFile, '--json');
      assert.deepEqual(json<ProjectView>(retoken).credentials, {
        token: true,
        githubApp: false,
        modelKeys: [],
      });
      assert.ok(!retoken.stdout.includes(newToken) && !retoken.stderr.includes(newToken));
      assert.equal((await (await inProcess()).projects.getSecrets(created.id)).token, newToken);

      assertFails(
        await docwright('project', 'update', created.id, '--json'),
        /nothing to change/,
        'update without options',
      );
      assertFails(
        await docwright('project', 'update', 'prj_00000000000000000000000000', '--name', 'x'),
        /project prj_00000000000000000000000000 does not exist/,
      );
      assertFails(
        await docwright('project', 'update', created.id, '--docs-dir', '../outside'),
        /--docs-dir: must be a relative POSIX path/,
      );
    });

    test('the code host is detected from well-known URLs, or given with --host', async () => {
      const cases: [string[], { repository: string; host: string }][] = [
        [
          ['--repository', 'https://github.com/acme/docs'],
          { repository: 'https://github.com/acme/docs', host: 'github' },
        ],
        [
          ['--repository', 'https://gitlab.com/acme/docs.git/'],
          { repository: 'https://gitlab.com/acme/docs', host: 'gitlab' },
        ],
        [
          ['--repository', 'https://codeberg.org/acme/docs'],
          { repository: 'https://codeberg.org/acme/docs', host: 'gitea' },
        ],
        [
          ['--repository', 'https://git.example.com/acme/docs', '--host', 'gitlab'],
          { repository: 'https://git.example.com/acme/docs', host: 'gitlab' },
        ],
        [
          // http is fine on a private network.
          [
            '--repository',
            'http://192.168.1.20:3000/acme/docs',
            '--host',
            'gitea',
            '--api-url',
            'http://192.168.1.20:3000/api/v1',
          ],
          { repository: 'http://192.168.1.20:3000/acme/docs', host: 'gitea' },
        ],
        [['--repository', `file://${repository}`], { repository: `file://${repository}`, host: 'local' }],
      ];
      // --ref: the default branch of a remote would be asked over the network.
      const results = await mapLimit(cases, 3, ([args]) =>
        docwright('project', 'create', '--name', 'Hosted', '--ref', 'main', ...args, '--json'),
      );
      results.forEach((result, i) => {
        const project = json<ProjectView>(result);
        const [args, expected] = cases[i]!;
        assert.deepEqual({ repository: project.repository, host: project.host }, expected, args.join(' '));
      });
    });

    test('a relative path is resolved against the working directory', async () => {
      const result = await run(
        env,
        [
          'project',
          'create',
          '--name',
          'Relative',
          '--repository',
          `./${path.basename(repository)}`,
          '--json',
        ],
        path.dirname(repository),
      );
      assert.equal(json<ProjectView>(result).repository, `file://${repository}`);
    });

    test('a local path with spaces works (no %20 lookups)', async () => {
      const parent = mkdtempSync(path.join(tmpdir(), 'docwright-space-'));
      cleanup.push(parent);
      const spaced = path.join(parent, 'my docs');
      mkdirSync(spaced);
      const source = createGitRepository();
      cleanup.push(source);
      // A clone of a repository on `main` is itself on `main`.
      await new Promise<void>((resolve, reject) =>
        execFile('git', ['clone', '-q', source, spaced], (error) => (error ? reject(error) : resolve())),
      );
      const project = json<ProjectView>(
        await docwright('project', 'create', '--name', 'Spaced', '--repository', spaced, '--json'),
      );
      assert.equal(project.repository, `file://${parent}/my%20docs`);
      assert.equal(project.ref, 'main');
    });

    test('bad repositories and hosts are refused with a precise message and nothing on stdout', async () => {
      const notRepository = mkdtempSync(path.join(tmpdir(), 'docwright-plain-'));
      cleanup.push(notRepository);
      const inside = path.join(repository, 'sub');
      mkdirSync(inside, { recursive: true });
      const before = json<{ projects: ProjectView[] }>(await docwright('project', 'list', '--json')).projects
        .length;
      const cases: [string[], RegExp][] = [
        [['--repository', 'ftp://x'], /--repository: unsupported scheme ftp: use https/],
        [
          ['--repository', 'https://git.example.com/a/b'],
          /--host: cannot tell the code host of git\.example\.com; set host to github, gitlab or gitea/,
        ],
        [
          ['--repository', 'http://github.com/a/b'],
          /--repository: http is allowed only for hosts on loopback or a private network; use https/,
        ],
        [
          ['--repository', 'https://github.com/acme'],
          /--repository: must name a repository as https:\/\/host\/owner\/name/,
        ],
        [['--repository', 'https://user:pw@github.com/a/b'], /--repository: must not contain credentials/],
        [['--repository', '~/docs'], /--repository: use an absolute path instead of ~/],
        [
          ['--repository', notRepository],
          new RegExp(`--repository: ${notRepository} is not a git repository`),
        ],
        [
          ['--repository', inside],
          new RegExp(`--repository: ${inside} is inside the git repository ${repository};`),
        ],
        [
          ['--repository', 'https://github.com/a/b', '--host', 'local'],
          /--host: host local needs a local path or file:\/\/ repository/,
        ],
        [
          ['--repository', repository, '--host', 'github'],
          /--host: host github needs an http\(s\) repository URL/,
        ],
      ];
      const results = await mapLimit(cases, 3, ([args]) =>
        docwright('project', 'create', '--name', 'Bad', '--ref', 'main', ...args, '--json'),
      );
      assertEachFails(cases, results);
      // One message line, as `docwright: …`: no stack trace.
      for (const result of results) assert.match(result.stderr, /^docwright: [^\n]+\n$/);
      assert.equal(
        json<{ projects: ProjectView[] }>(await docwright('project', 'list', '--json')).projects.length,
        before,
        'nothing created',
      );
    });

    test('unknown flags, missing flags and bad values name the flag', async () => {
      const tokenFile = path.join(mkdtempSync(path.join(tmpdir(), 'docwright-token-')), 'token');
      cleanup.push(path.dirname(tokenFile));
      writeFileSync(tokenFile, 'x');
      const valid = ['--name', 'Docs', '--repository', repository];
      const cases: [string[], RegExp][] = [
        [
          [...valid, '--rate-limit', 'abc'],
          /option '--rate-limit <n>' argument 'abc' is invalid\. must be a whole number/,
        ],
        [[...valid, '--rate-limit', '0'], /option '--rate-limit <n>' argument '0' is invalid/],
        [[...valid, '--rate-limit', '2000000'], /--rate-limit: Too big/],
        [
          [...valid, '--host', 'nope'],
          /option '--host <host>' argument 'nope' is invalid\. Allowed choices are github, gitlab, gitea, local/,
        ],
        [[...valid, '--bogus'], /unknown option '--bogus'/],
        [
          [...valid, '--labels', ','],
          /option '--labels <labels>' argument ',' is invalid\. must not be empty/,
        ],
        [[...valid, '--model', 'gpt-4'], /--model: must be provider\/model-id/],
        [[...valid, '--author-email', 'nope'], /--author-email: /],
        [[...valid, '--api-url', 'ftp://x'], /--api-url: must be an http\(s\) URL/],
        [[...valid, '--ref', 'bad..ref'], /--ref: must be a valid branch name/],
        [
          [...valid, '--token-file', '/nonexistent/token'],
          /option '--token-file <path>' argument '\/nonexistent\/token' is invalid\. cannot read/,
        ],
        [
          [...valid, '--token', 'a', '--token-file', tokenFile],
          /option '--token-file <path>' cannot be used with option '--token <value>'/,
        ],
        [['--repository', repository], /required option '--name <name>' not specified/],
        [['--name', 'Docs'], /required option '--repository <url-or-path>' not specified/],
        [[...valid, '--rate-limit'], /option '--rate-limit <n>' argument missing/],
      ];
      // --json first, so that the last case really ends with a flag that lacks its value.
      const results = await mapLimit(cases, 3, ([args]) => docwright('project', 'create', '--json', ...args));
      assertEachFails(cases, results);
    });
  });

  describe('keys', () => {
    let projectId: string;
    let created: CreatedKey;

    before(async () => {
      projectId = json<ProjectView>(
        await docwright('project', 'create', '--name', 'Keys', '--repository', repository, '--json'),
      ).id;
    });

    test('key create --json prints the full key once, well formed, and it authenticates', async () => {
      const result = await docwright('key', 'create', '--project', projectId, '--name', 'ci', '--json');
      created = json<CreatedKey>(result);
      assert.match(created.id, /^key_[0-9a-z]{26}$/);
      assert.equal(created.projectId, projectId);
      assert.equal(created.name, 'ci');
      assert.match(created.key, /^dwk_[0-9A-Za-z]{38}$/);
      assert.ok(isWellFormedKey(created.key), 'the checksum is right');
      assert.equal(created.display, `dwk_…${created.key.slice(-4)}`);
      assert.equal(
        Date.parse(created.expiresAt!) - Date.parse(created.createdAt),
        DEFAULT_KEY_EXPIRY_DAYS * 86_400_000,
        'the key service’s default, as on the dashboard',
      );
      assert.equal(created.revokedAt, null);
      assert.ok(!result.stderr.includes(created.key));
      const principal = await (await inProcess()).keys.authenticate(created.key);
      assert.deepEqual(principal, { keyId: created.id, projectId });
    });

    test('the key is stored only as a hash', async () => {
      const a = await inProcess();
      const rows = await a.store.db.selectFrom('api_keys').selectAll().execute();
      assert.ok(!JSON.stringify(rows).includes(created.key.slice(4)));
      await assertNotInDataDir(created.key.slice(4));
    });

    test('key create without --json shows the key and says it is shown once', async () => {
      const result = await docwright('key', 'create', '--project', projectId);
      assert.equal(result.code, 0, result.stderr);
      const key = /dwk_[0-9A-Za-z]{38}/.exec(result.stdout)?.[0];
      assert.ok(key && isWellFormedKey(key));
      assert.match(result.stdout, /shown only now/);
    });

    test('key list shows keys only by their display form', async () => {
      const listed = await docwright('key', 'list', '--project', projectId, '--json');
      const { keys } = json<{ keys: ApiKeyView[] }>(listed);
      const mine = keys.find((k) => k.id === created.id);
      assert.ok(mine);
      assert.equal(mine.display, created.display);
      assert.ok(!('key' in mine));
      const table = await docwright('key', 'list', '--project', projectId);
      assert.equal(table.code, 0);
      assert.match(
        table.stdout,
        new RegExp(`^${created.id}\\s+dwk_…${created.key.slice(-4)}\\s+ci\\s.*\\sactive$`, 'm'),
      );
      for (const output of [listed.stdout, listed.stderr, table.stdout, table.stderr]) {
        assert.ok(!output.includes(created.key), 'the full key never appears');
        assert.ok(!output.includes(created.key.slice(4, 20)), 'nor its random part');
      }
      assertFails(
        await docwright('key', 'list', '--project', 'prj_00000000000000000000000000'),
        /project prj_00000000000000000000000000 does not exist/,
      );
    });

    test('key revoke makes authentication fail at once; revoking again changes nothing', async () => {
      const revoked = json<ApiKeyView>(await docwright('key', 'revoke', created.id, '--json'));
      assert.equal(revoked.id, created.id);
      assert.ok(revoked.revokedAt);
      assert.ok(!('key' in revoked));
      await assert.rejects((await inProcess()).keys.authenticate(created.key), /revoked/);
      const again = json<ApiKeyView>(await docwright('key', 'revoke', created.id, '--json'));
      assert.equal(again.revokedAt, revoked.revokedAt);
      const table = await docwright('key', 'list', '--project', projectId);
      assert.match(table.stdout, new RegExp(`^${created.id}\\s.*\\srevoked$`, 'm'));
      const human = await docwright('key', 'revoke', created.id);
      assert.match(human.stdout, new RegExp(`^revoked ${created.id} \\(dwk_…${created.key.slice(-4)}\\)`));
      assertFails(
        await docwright('key', 'revoke', 'key_00000000000000000000000000'),
        /key key_00000000000000000000000000 does not exist/,
      );
    });

    test('key create for an unknown project fails and prints no key', async () => {
      assertFails(
        await docwright('key', 'create', '--project', 'prj_00000000000000000000000000', '--json'),
        /project prj_00000000000000000000000000 does not exist/,
      );
      assertFails(
        await docwright('key', 'create', '--json'),
        /required option '--project <id>' not specified/,
      );
    });

    test('--expires-in and --expires-at set the expiry, --no-expiry none; the key stops working after it', async () => {
      const start = Date.now();
      const inADay = json<CreatedKey>(
        await docwright('key', 'create', '--project', projectId, '--expires-in', '1d', '--json'),
      );
      const expiresAt = Date.parse(inADay.expiresAt ?? '');
      assert.ok(
        expiresAt >= start + 86_400_000 && expiresAt <= Date.now() + 86_400_000,
        `${inADay.expiresAt}`,
      );
      await (await inProcess()).keys.authenticate(inADay.key);
      // The same database seen two days later.
      const later = await openApp(loadConfig({ ...env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
        logger: createLogger('silent'),
        now: () => new Date(Date.now() + 2 * 86_400_000),
      });
      try {
        await assert.rejects(later.keys.authenticate(inADay.key), /expired/);
      } finally {
        await later.close();
      }

      const at = json<CreatedKey>(
        await docwright('key', 'create', '--project', projectId, '--expires-at', '2099-01-31', '--json'),
      );
      assert.equal(at.expiresAt, '2099-01-31T00:00:00.000Z');
      const withOffset = json<CreatedKey>(
        await docwright(
          'key',
          'create',
          '--project',
          projectId,
          '--expires-at',
          '2099-01-31T12:00:00+02:00',
          '--json',
        ),
      );
      assert.equal(withOffset.expiresAt, '2099-01-31T10:00:00.000Z');
      const never = json<CreatedKey>(
        await docwright('key', 'create', '--project', projectId, '--no-expiry', '--json'),
      );
      assert.equal(never.expiresAt, null);
    });

    test('bad expiries are refused, naming the flag', async () => {
      const cases: [string[], RegExp][] = [
        [
          ['--expires-in', '0d'],
          /option '--expires-in <duration>' argument '0d' is invalid\. must be between 1m/,
        ],
        [
          ['--expires-in', '1w'],
          /option '--expires-in <duration>' argument '1w' is invalid\. must be a duration/,
        ],
        [['--expires-in', '-1d'], /option '--expires-in <duration>' argument '-1d' is invalid/],
        [
          ['--expires-in', '99999999999d'],
          /option '--expires-in <duration>' argument '99999999999d' is invalid/,
        ],
        [
          ['--expires-at', 'tomorrow'],
          /option '--expires-at <date>' argument 'tomorrow' is invalid\. must be an ISO 8601 date/,
        ],
        [['--expires-at', '2099-02-30'], /option '--expires-at <date>' argument '2099-02-30' is invalid/],
        [
          ['--expires-at', '2099-01-31T12:00'],
          /option '--expires-at <date>' argument '2099-01-31T12:00' is invalid\..*needs Z/,
        ],
        [
          ['--expires-at', '2099-01-31T24:30:00Z'],
          /option '--expires-at <date>' argument '2099-01-31T24:30:00Z' is invalid/,
        ],
        [['--expires-at', '2000-01-01'], /--expires-at must be in the future/],
        [
          ['--expires-at', '2099-01-31', '--expires-in', '1d'],
          /option '--expires-in <duration>' cannot be used with option '--expires-at <date>'/,
        ],
      ];
      const before = json<{ keys: ApiKeyView[] }>(
        await docwright('key', 'list', '--project', projectId, '--json'),
      ).keys.length;
      const results = await mapLimit(cases, 3, ([args]) =>
        docwright('key', 'create', '--project', projectId, ...args, '--json'),
      );
      assertEachFails(cases, results);
      const after = json<{ keys: ApiKeyView[] }>(
        await docwright('key', 'list', '--project', projectId, '--json'),
      ).keys.length;
      assert.equal(after, before, 'no key was created');
    });
  });
});
