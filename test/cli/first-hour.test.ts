// A new user's first hour (issue 11): the same data from any directory, a data directory left by
// an earlier version found and announced, a port in use and a model that cannot work said plainly,
// secrets kept off command lines, and a repository that went away failing as repository-not-found.
// Real `docwright` processes throughout.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AgentJob } from '../../src/client/types.ts';
import { type ScriptedServer, startOpenAIServer } from '../doubles/openai-server.ts';
import { bearer, createGitRepository } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase, testDialect } from '../helpers/database.ts';
import { cleanEnv, closedPort, runCli, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

const _BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');

/** `docwright <args>` as a user runs it, from `cwd`, with `input` on stdin. */
const docwright = (
  options: { env: Record<string, string>; cwd?: string; input?: string },
  ...args: string[]
) => runCli(args, options.env, options.input, { cwd: options.cwd });

const temporaries: string[] = [];
const temporary = (prefix = 'docwright-first-hour-') => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  temporaries.push(dir);
  return dir;
};
after(() => {
  for (const dir of temporaries) rmSync(dir, { recursive: true, force: true });
});

const onlySqlite =
  testDialect === 'sqlite' ? false : 'the SQLite data directory only (PostgreSQL is found by DATABASE_URL)';

describe('the data directory', { skip: onlySqlite }, () => {
  test('is ~/.local/share/docwright (or $XDG_DATA_HOME/docwright) from any working directory', async () => {
    const home = temporary();
    const repo = createGitRepository();
    temporaries.push(repo);
    const env = { HOME: home };
    const here = temporary();
    const there = path.join(temporary(), 'deep', 'down');
    mkdirSync(there, { recursive: true });
    const created = await docwright(
      { env, cwd: here },
      'project',
      'create',
      '--name',
      'Docs',
      '--repository',
      repo,
      '--model',
      'openai-compatible/x',
      '--openai-compatible-base-url',
      'http://127.0.0.1:9',
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const listed = await docwright({ env, cwd: there }, 'project', 'list', '--json');
    assert.deepEqual(
      (JSON.parse(listed.stdout) as { projects: { id: string }[] }).projects.map((p) => p.id),
      [id],
      'the same project from another directory',
    );
    assert.ok(existsSync(path.join(home, '.local', 'share', 'docwright', 'docwright.db')));
    assert.ok(
      !existsSync(path.join(here, '.docwright')) && !existsSync(path.join(there, '.docwright')),
      'nothing in the working directories',
    );

    const xdg = temporary();
    const other = await docwright(
      { env: { ...env, XDG_DATA_HOME: xdg }, cwd: there },
      'project',
      'list',
      '--json',
    );
    assert.deepEqual(JSON.parse(other.stdout), { projects: [] });
    assert.ok(existsSync(path.join(xdg, 'docwright', 'docwright.db')), '$XDG_DATA_HOME/docwright');
  });

  test('a ./.docwright left by an earlier version is used from its directory and below, with a one-line notice', async () => {
    const home = temporary();
    const checkout = temporary();
    const legacy = path.join(checkout, '.docwright');
    const repo = createGitRepository();
    temporaries.push(repo);
    // What docwright 0.1 did when started in the checkout (`npm start`): data in ./.docwright.
    const created = await docwright(
      { env: { DOCWRIGHT_DATA_DIR: legacy }, cwd: checkout },
      'project',
      'create',
      '--name',
      'Old',
      '--repository',
      repo,
      '--json',
    );
    const { id } = JSON.parse(created.stdout) as { id: string };
    const below = path.join(checkout, 'docs', 'guides');
    mkdirSync(below, { recursive: true });
    const standard = path.join(home, '.local', 'share', 'docwright');
    const notice = `docwright: note: using ${legacy}, left by an earlier docwright; to use it from any directory, move it: mkdir -p ${path.dirname(standard)} && mv ${legacy} ${standard} (or set DOCWRIGHT_DATA_DIR)\n`;
    for (const cwd of [checkout, below]) {
      const listed = await docwright({ env: { HOME: home }, cwd }, 'project', 'list', '--json');
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(
        (JSON.parse(listed.stdout) as { projects: { id: string }[] }).projects.map((p) => p.id),
        [id],
      );
      assert.equal(listed.stderr, notice);
    }
    assert.ok(!existsSync(standard), 'no empty database was made beside it');

    // The server says the same, once, in its log.
    const server = await startServerProcess({ ...cleanEnv(), HOME: home } as Record<string, string>, [], {
      cwd: below,
      replaceEnv: true,
    });
    try {
      assert.match(
        server.output(),
        /"dataDir":"[^"]+\/\.docwright","msg":"using [^"]+\/\.docwright, left by an earlier docwright/,
      );
    } finally {
      await server.stop();
    }

    // Once the standard location has a database, it wins, and the old one is named as ignored.
    const moved = await docwright({ env: { HOME: home }, cwd: temporary() }, 'migrate');
    assert.equal(moved.code, 0, moved.stderr);
    const listed = await docwright({ env: { HOME: home }, cwd: below }, 'project', 'list', '--json');
    assert.deepEqual(JSON.parse(listed.stdout), { projects: [] });
    assert.equal(
      listed.stderr,
      `docwright: note: ignoring ${legacy}, left by an earlier docwright: the data directory is ${standard} (set DOCWRIGHT_DATA_DIR=${legacy} to use the old one)\n`,
    );
  });
});

describe(`first-hour messages on ${testDialect}`, () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let repo: string;
  let model: ScriptedServer;
  let busy: Server;

  before(async () => {
    [database, model] = await Promise.all([createTestDatabase(), startOpenAIServer()]);
    env = { ...database.env };
    repo = createGitRepository({
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
    });
    temporaries.push(repo);
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => busy?.close(resolve));
    await Promise.all([database?.drop(), model?.close()]);
  });

  test('serve on a port in use: one line that says to use --port; exit 2', async () => {
    const { port } = busy.address() as AddressInfo;
    const result = await docwright({ env }, 'serve', '--port', String(port));
    assert.equal(result.code, 2, result.stderr);
    assert.equal(
      result.stderr,
      `docwright: port ${port} on 127.0.0.1 is already in use (another docwright serve?): stop that process, or use --port <n>\n`,
    );
  });

  test('project create warns when jobs could not run for want of a model, and still creates the project', async () => {
    const closed = await closedPort();
    const cases: [string[], Record<string, string>, string][] = [
      [
        [],
        {},
        'no model is configured, so jobs of this project will fail with model-not-configured: set DOCWRIGHT_MODEL for the server (e.g. anthropic/claude-sonnet-4-5), or give the project --model',
      ],
      [
        ['--model', 'anthropic/claude-sonnet-4-5'],
        {},
        'model "anthropic/claude-sonnet-4-5" needs an API key: set ANTHROPIC_API_KEY or the project\'s anthropic key (jobs will fail with model-not-configured)',
      ],
      [
        [],
        { DOCWRIGHT_MODEL: 'openai-compatible/llama3' },
        'model "openai-compatible/llama3" needs a base URL: set DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL or the project\'s OpenAI-compatible base URL (jobs will fail with model-not-configured)',
      ],
      [
        [
          '--model',
          'openai-compatible/llama3',
          '--openai-compatible-base-url',
          `http://127.0.0.1:${closed}/v1`,
        ],
        {},
        `the model server at http://127.0.0.1:${closed}/v1 does not answer (ECONNREFUSED): start it, or fix the base URL; jobs of this project will fail with model-unavailable until it answers`,
      ],
      [['--model', 'openai-compatible/scripted', '--openai-compatible-base-url', model.url], {}, ''],
      [['--model', 'anthropic/claude-sonnet-4-5'], { ANTHROPIC_API_KEY: 'sk-ant-test-0123456789' }, ''],
    ];
    for (const [flags, extra, warning] of cases) {
      const result = await docwright(
        { env: { ...env, ...extra } },
        'project',
        'create',
        '--name',
        'Docs',
        '--repository',
        repo,
        ...flags,
        '--json',
      );
      assert.equal(result.code, 0, result.stderr);
      assert.match((JSON.parse(result.stdout) as { id: string }).id, /^prj_/);
      const lines = result.stderr.trimEnd().split('\n');
      assert.deepEqual(
        lines.filter((l) => l.startsWith('docwright: warning: ')),
        warning ? [`docwright: warning: ${warning}`] : [],
        flags.join(' '),
      );
      // No server runs on this database: the check says whose environment it judged by.
      assert.match(
        lines.at(-1)!,
        /^docwright: note: no docwright server is running on .+, so the model was checked in this shell's environment \(DOCWRIGHT_MODEL (is \S+|is not set)\): start the server with the same model settings$/,
      );
      assert.ok(!result.stderr.includes('sk-ant-test'), 'no key in the output');
    }
  });

  test('secrets from files or stdin; a secret as a bare flag value works but is warned about', async () => {
    const token = 'glpat-Secret0123456789abcd';
    const key = 'sk-ant-Secret0123456789abcd';
    const keyFile = path.join(temporary(), 'anthropic-key');
    writeFileSync(keyFile, `${key}\n`);
    const base = [
      'project',
      'create',
      '--name',
      'Docs',
      '--repository',
      repo,
      '--model',
      'anthropic/claude-sonnet-4-5',
      '--json',
    ];

    const fromStdin = await docwright(
      { env, input: `${token}\n` },
      ...base,
      '--token-file',
      '-',
      '--anthropic-api-key-file',
      keyFile,
    );
    assert.equal(fromStdin.code, 0, fromStdin.stderr);
    assert.doesNotMatch(
      fromStdin.stderr,
      /warning/,
      'no warning: no secret on the command line, and the project has a key',
    );
    const project = JSON.parse(fromStdin.stdout) as {
      id: string;
      credentials: { token: boolean; modelKeys: string[] };
    };
    assert.deepEqual(project.credentials.modelKeys, ['anthropic']);
    assert.equal(project.credentials.token, true);

    const bare = await docwright({ env }, ...base, '--token', token, '--anthropic-api-key', key);
    assert.equal(bare.code, 0, bare.stderr);
    assert.deepEqual(
      bare.stderr.split('\n').filter((l) => l.includes('warning')),
      [
        'docwright: warning: --token puts the secret in your shell history and the process list (ps); use --token-file <path>, or --token-file - to read it from stdin',
        'docwright: warning: --anthropic-api-key puts the secret in your shell history and the process list (ps); use --anthropic-api-key-file <path>, or --anthropic-api-key-file - to read it from stdin',
      ],
    );
    assert.ok(!bare.stdout.includes(token) && !bare.stdout.includes(key), 'never printed back');

    const twice = await docwright(
      { env, input: token },
      ...base,
      '--token-file',
      '-',
      '--anthropic-api-key-file',
      '-',
    );
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /only one option can read standard input/);

    // The stored secrets are the ones given (read back the way a run does).
    const { openApp } = await import('../../src/app.ts');
    const { loadConfig } = await import('../../src/config.ts');
    const { createLogger } = await import('../../src/logger.ts');
    const app = await openApp(loadConfig({ ...env, DOCWRIGHT_LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
    });
    try {
      assert.deepEqual(await app.projects.getSecrets(project.id), { token, anthropicApiKey: key });
      const bareId = (JSON.parse(bare.stdout) as { id: string }).id;
      assert.deepEqual(await app.projects.getSecrets(bareId), { token, anthropicApiKey: key });
    } finally {
      await app.close();
    }
  });

  test('a job on a repository deleted after the project was created fails as repository-not-found, saying what to do', async () => {
    const gone = createGitRepository({ 'index.mdx': '# Hello\n' });
    const created = await docwright(
      { env },
      'project',
      'create',
      '--name',
      'Gone',
      '--repository',
      gone,
      '--model',
      'openai-compatible/scripted',
      '--openai-compatible-base-url',
      model.url,
      '--json',
    );
    const { id: projectId } = JSON.parse(created.stdout) as { id: string };
    const { key } = JSON.parse(
      (await docwright({ env }, 'key', 'create', '--project', projectId, '--json')).stdout,
    ) as { key: string };
    rmSync(gone, { recursive: true, force: true });
    const server = await startServerProcess(env);
    try {
      const response = await fetch(`${server.url}/v2/agent/${projectId}/job`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'Fix the typo' }),
      });
      const job = (await response.json()) as AgentJob;
      const failed = await waitFor(async () => {
        const current = (await (
          await fetch(`${server.url}/v2/agent/${projectId}/job/${job.id}`, { headers: bearer(key) })
        ).json()) as AgentJob;
        return current.status === 'active' ? undefined : current;
      });
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error?.code, 'repository-not-found');
      assert.match(
        failed.error!.message,
        /^the repository is missing or is not a git repository \('.+' does not appear to be a git repository\): was it moved or deleted\? Point the project at it: docwright project update <id> --repository <path-or-url>$/,
      );
      assert.doesNotMatch(server.output(), /runner threw|internal-error/);
    } finally {
      await server.stop();
    }
  });
});
