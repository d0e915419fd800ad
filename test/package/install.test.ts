// The npm package as a user gets it (docs/operations.mdx): `npm pack` (which builds dist/ through `prepack`),
// `npm install -g` into a temporary prefix, then the installed `docwright` run from empty
// directories with no TypeScript anywhere near it: --version, serve, project and key commands, a
// real job through the whole pipeline (worker, agent, git) against the scripted OpenAI-compatible
// model, and `docwright/client` imported — and type-checked — from another package.
import assert from 'node:assert/strict';
import { type ExecFileException, execFile, execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AgentJob } from '../../src/client/types.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { taskModel } from '../doubles/task-model.ts';
import { builtinPlans } from '../eval/builtin-solutions.ts';
import { createGitRepository } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase, testDialect } from '../helpers/database.ts';
import { cleanEnv, type ServerProcess, startServerProcess } from '../helpers/process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PACKAGE = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
};
/**
 * The Node that runs the installed `docwright` (first on PATH): this one, or the bin directory in
 * DOCWRIGHT_TEST_PACKAGE_NODE, to try the package on the oldest release it supports (22.12).
 */
const NODE_BIN = process.env.DOCWRIGHT_TEST_PACKAGE_NODE || path.dirname(process.execPath);
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The caller's environment without anything that would point docwright elsewhere, Node 24 first on PATH. */
const packageEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
  ...cleanEnv(),
  PATH: `${NODE_BIN}${path.delimiter}${process.env.PATH}`,
  ...extra,
});

function run(
  file: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env,
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error: ExecFileException | null, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

function ok(result: Run, what: string): Run {
  assert.equal(result.code, 0, `${what} failed:\n${result.stderr}\n${result.stdout}`);
  return result;
}

/** Every `.ts` file under src/ (declarations aside), relative to src/. */
function sourceModules(dir = path.join(ROOT, 'src')): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(path.join(ROOT, 'src'), path.join(e.parentPath, e.name)));
}

/** Every other file under src/ (stylesheets, scripts and images the dashboard serves), relative to src/. */
function sourceAssets(dir = path.join(ROOT, 'src')): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.endsWith('.ts'))
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('the npm package, packed, installed globally and run from empty directories', () => {
  let tmp: string;
  let tarball: string;
  let prefix: string;
  let docwright: string;
  let installed: string;
  let packSeconds: number;
  let installSeconds: number;

  before(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'docwright-package-'));
    // npm and the build run on this Node; only the installed docwright on NODE_BIN's.
    const npmEnv = {
      ...cleanEnv(),
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
    };
    let started = Date.now();
    // `npm pack` runs `prepack`, i.e. the build: what is tested is what would be published.
    const packed = ok(
      await run('npm', ['pack', '--json', '--pack-destination', tmp], {
        cwd: ROOT,
        env: npmEnv,
        timeoutMs: 180_000,
      }),
      'npm pack',
    );
    packSeconds = (Date.now() - started) / 1000;
    tarball = path.join(tmp, (JSON.parse(packed.stdout) as [{ filename: string }])[0].filename);
    prefix = path.join(tmp, 'prefix');
    started = Date.now();
    // Dependencies come from npm's cache when it has them (CI's `npm ci` filled it), else the registry.
    ok(
      await run(
        'npm',
        ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
        {
          cwd: tmp,
          env: npmEnv,
          timeoutMs: 300_000,
        },
      ),
      'npm install -g',
    );
    installSeconds = (Date.now() - started) / 1000;
    docwright = path.join(prefix, 'bin', 'docwright');
    installed = path.join(prefix, 'lib', 'node_modules', 'docwright');
  });

  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('the tarball holds the built package only: bin, dist (every module of src/ compiled, with declarations, and its assets), README, LICENSE', (t) => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line && !line.endsWith('/'))
      .map((line) => line.replace(/^package\//, ''));
    const stray = files.filter(
      (f) =>
        !['package.json', 'README.md', 'LICENSE', 'bin/docwright.js'].includes(f) && !f.startsWith('dist/'),
    );
    assert.deepEqual(stray, [], 'no tests, fixtures, benchmarks, scripts, CI files or sources');
    for (const file of ['README.md', 'LICENSE', 'package.json', 'bin/docwright.js'])
      assert.ok(files.includes(file), `${file} is in the package`);
    const license = execFileSync('tar', ['-xzOf', tarball, 'package/LICENSE'], { encoding: 'utf8' });
    assert.match(license, /^MIT License\n/, 'the license package.json names');
    assert.equal(PACKAGE.license, 'MIT');
    for (const asset of sourceAssets())
      assert.ok(files.includes(`dist/${asset}`), `dist/${asset} is in the package`);
    for (const module of sourceModules()) {
      const base = module.replace(/\.ts$/, '');
      assert.ok(files.includes(`dist/${base}.js`), `dist/${base}.js is in the package`);
      assert.ok(files.includes(`dist/${base}.d.ts`), `dist/${base}.d.ts is in the package`);
    }
    const size = readFileSync(tarball).length;
    assert.ok(size < 5 * 1024 * 1024, `the tarball is under 5 MB (${size} bytes)`);
    // Not an assertion on speed: the figures go to the report.
    t.diagnostic(
      `tarball ${(size / 1024).toFixed(0)} KiB; pack ${packSeconds} s; install ${installSeconds} s`,
    );
  });

  test('the installed package has no TypeScript source to fall back on', () => {
    assert.ok(existsSync(path.join(installed, 'dist', 'cli', 'main.js')));
    assert.ok(!existsSync(path.join(installed, 'src')), 'an installed docwright runs dist/, never sources');
  });

  test('docwright --version and --help from an empty directory', async () => {
    const empty = mkdtempSync(path.join(tmp, 'empty-'));
    const env = packageEnv({ HOME: path.join(tmp, 'home') });
    const version = ok(await run(docwright, ['--version'], { cwd: empty, env }), '--version');
    assert.equal(version.stdout, `${PACKAGE.version}\n`);
    assert.equal(version.stderr, '');
    const help = ok(await run(docwright, ['--help'], { cwd: empty, env }), '--help');
    for (const command of ['serve', 'worker', 'migrate', 'project', 'key', 'job', 'doctor', 'user', 'eval']) {
      assert.match(help.stdout, new RegExp(`^  ${command}\\b`, 'm'), `--help lists ${command}`);
    }
  });

  test('docwright eval runs the built-in suite, which ships in the package, through the installed pipeline', async () => {
    const model = await startOpenAIServer({ fallback: taskModel(await builtinPlans()) });
    try {
      const result = await run(
        docwright,
        ['eval', '--model', 'openai-compatible/scripted', '--tasks', 'typo,internal-refactor', '--json'],
        {
          cwd: mkdtempSync(path.join(tmp, 'eval-cwd-')),
          env: packageEnv({ HOME: path.join(tmp, 'home'), DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url }),
          timeoutMs: 120_000,
        },
      );
      const doc = JSON.parse(ok(result, 'docwright eval').stdout) as {
        tasks: { id: string; score: number }[];
      };
      assert.deepEqual(
        doc.tasks.map((t) => [t.id, t.score]),
        [
          ['internal-refactor', 100],
          ['typo', 100],
        ],
      );
      assert.ok(existsSync(path.join(installed, 'dist', 'eval', 'builtin', 'tasks', 'typo', 'task.json')));
    } finally {
      await model.close();
    }
  });

  describe(`serve, the admin commands and a job, on ${testDialect}`, () => {
    let database: TestDatabase;
    let model: ScriptedServer;
    let repo: string;
    let home: string;
    let env: NodeJS.ProcessEnv;
    let server: ServerProcess | undefined;
    let projectId: string;
    let key: string;
    let job: AgentJob;

    before(async () => {
      [database, model] = await Promise.all([createTestDatabase(), startOpenAIServer()]);
      repo = createGitRepository({
        'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } }, null, 2)}\n`,
        'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
      });
      home = path.join(tmp, 'home');
      mkdirSync(home, { recursive: true });
      // SQLite: no DOCWRIGHT_DATA_DIR, so the default location is what is used (and checked).
      const { DOCWRIGHT_DATA_DIR: _, ...databaseEnv } = database.env;
      env = packageEnv({
        HOME: home,
        DOCWRIGHT_LOG_LEVEL: 'info',
        DOCWRIGHT_MODEL: 'openai-compatible/scripted',
        ...databaseEnv,
      });
      server = await startServerProcess(env, [], {
        bin: docwright,
        cwd: mkdtempSync(path.join(tmp, 'serve-cwd-')),
        replaceEnv: true,
      });
    });

    after(async () => {
      await server?.stop();
      await Promise.all([model?.close(), database?.drop()]);
      if (repo) rmSync(repo, { recursive: true, force: true });
    });

    test('docwright serve answers /healthz, /readyz and the dashboard; its SQLite database is in the default data directory', async () => {
      assert.deepEqual(await (await fetch(`${server!.url}/healthz`)).json(), { status: 'ok' });
      assert.deepEqual(await (await fetch(`${server!.url}/readyz`)).json(), { status: 'ready' });
      // The dashboard renders, and serves its own assets from the installed package.
      const login = await fetch(`${server!.url}/login`);
      assert.equal(login.status, 200);
      const page = await login.text();
      const stylesheet = /href="(\/assets\/[^"]+\.css)"/.exec(page)?.[1];
      assert.ok(stylesheet, 'the sign-in page links its stylesheet');
      const css = await fetch(`${server!.url}${stylesheet}`);
      assert.equal(css.status, 200);
      assert.ok((await css.text()).length > 100);
      if (testDialect === 'sqlite') {
        assert.ok(
          existsSync(path.join(home, '.local', 'share', 'docwright', 'docwright.db')),
          '~/.local/share/docwright',
        );
      }
    });

    test('project create and key create from another empty directory reach the same database', async () => {
      const elsewhere = mkdtempSync(path.join(tmp, 'admin-cwd-'));
      const created = ok(
        await run(
          docwright,
          [
            'project',
            'create',
            '--name',
            'Docs',
            '--repository',
            repo,
            '--openai-compatible-base-url',
            model.url,
            '--json',
          ],
          { cwd: elsewhere, env },
        ),
        'project create',
      );
      projectId = (JSON.parse(created.stdout) as { id: string }).id;
      assert.equal(created.stderr, '', 'a model is configured and answers: no warning');
      const keyed = ok(
        await run(docwright, ['key', 'create', '--project', projectId, '--json'], { cwd: elsewhere, env }),
        'key create',
      );
      key = (JSON.parse(keyed.stdout) as { key: string }).key;
      assert.match(key, /^dwk_/);
    });

    test('job create --wait runs a job through the installed worker, agent and git: completed, the branch holds the edit', async () => {
      model.push(
        toolCall('write_file', {
          path: 'limits.mdx',
          content: '---\ntitle: Limits\n---\n\n100 jobs per hour.\n',
        }),
        toolCall('read_file', { path: 'docs.json' }),
        toolCall('edit_file', { path: 'docs.json', old_string: '"index"', new_string: '"index", "limits"' }),
        toolCall('finish', { title: 'Document the limits', summary: 'Adds a Limits page.' }),
      );
      const result = await run(
        docwright,
        ['job', 'create', '--project', projectId, '--prompt', 'Document the limits', '--wait', '--json'],
        {
          cwd: mkdtempSync(path.join(tmp, 'job-cwd-')),
          env: { ...env, DOCWRIGHT_URL: server!.url, DOCWRIGHT_API_KEY: key },
        },
      );
      job = JSON.parse(ok(result, 'job create --wait').stdout) as AgentJob;
      assert.equal(job.status, 'completed', result.stderr);
      assert.equal(job.summary, 'Adds a Limits page.');
      const changed = execFileSync('git', ['diff', '--name-only', `main..${job.branch}`], {
        cwd: repo,
        encoding: 'utf8',
      });
      assert.deepEqual(changed.trim().split('\n'), ['docs.json', 'limits.mdx']);
    });

    test('another package imports docwright/client (and docwright), calls the server, and type-checks against the declarations', async () => {
      const consumer = path.join(tmp, 'consumer');
      mkdirSync(path.join(consumer, 'node_modules'), { recursive: true });
      writeFileSync(
        path.join(consumer, 'package.json'),
        JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
      );
      // What `npm install docwright` would put there: the installed package, its dependencies inside.
      symlinkSync(installed, path.join(consumer, 'node_modules', 'docwright'));
      writeFileSync(
        path.join(consumer, 'index.ts'),
        `import * as root from 'docwright';
import { type AgentJob, createClient, DocwrightApiError } from 'docwright/client';

const client = createClient({ baseUrl: process.env.URL!, apiKey: process.env.KEY! });
const job: AgentJob = await client.getJob(process.env.PROJECT!, process.env.JOB!);
const status: 'active' | 'completed' | 'archived' | 'failed' = job.status;
let missing = '';
try {
  await client.getJob(process.env.PROJECT!, 'job_01j0000000000000000000000');
} catch (error) {
  if (error instanceof DocwrightApiError) missing = error.code;
}
// @ts-expect-error the declarations are precise: a job has no such field
job.noSuchField;
console.log(JSON.stringify({ id: job.id, status, missing, version: root.VERSION, same: root.createClient === createClient }));
`,
      );
      writeFileSync(
        path.join(consumer, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'es2024',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ['node'],
            typeRoots: [path.join(ROOT, 'node_modules', '@types')],
          },
          files: ['index.ts'],
        }),
      );
      ok(
        await run(process.execPath, [TSC, '-p', consumer], { cwd: consumer, env: packageEnv({}) }),
        'tsc on the consumer',
      );
      const ran = ok(
        await run(process.execPath, ['index.ts'], {
          cwd: consumer,
          env: packageEnv({ URL: server!.url, KEY: key, PROJECT: projectId, JOB: job.id }),
        }),
        'the consumer',
      );
      assert.deepEqual(JSON.parse(ran.stdout), {
        id: job.id,
        status: 'completed',
        missing: 'job-not-found',
        version: PACKAGE.version,
        same: true,
      });
    });
  });
});
