import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { serverUrl } from '../../src/cli/job.ts';
import type { AgentJob, JobEvent } from '../../src/client/types.ts';
import { httpError, type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { closedPort, type ServerProcess, scriptMissing, startServerProcess } from '../helpers/process.ts';

/**
 * `docwright job …` as a user runs it: the real CLI as a child process against a real
 * `docwright serve` process (API and worker), whose agent talks to the OpenAI-compatible
 * double, on a local project. Judged by exit code, stdout, stderr and the repository.
 */

const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');

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

/** Every output of every run, to check at the end that the API key never appeared. */
const outputs: string[] = [];

function run(env: Record<string, string>, args: string[], input?: string, command?: string[]): Promise<Run> {
  const [file, ...rest] = command ?? [process.execPath, BIN, ...args];
  return new Promise((resolve) => {
    const child = execFile(
      file!,
      rest,
      { env: { ...baseEnv(), ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        outputs.push(stdout, stderr);
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin!.end(input ?? '');
  });
}

/** A successful `--json` run: exit 0 and the whole of stdout is one JSON document. */
function json<T>(result: Run, code = 0): T {
  assert.equal(result.code, code, `exit code (stderr: ${result.stderr})`);
  return JSON.parse(result.stdout) as T;
}

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

describe('docwright job … against a docwright serve process', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let server: ServerProcess;
  let repo: string;
  let projectId: string;
  let key: string;
  let env: Record<string, string>;
  let tmp: string;
  const job = (args: string[], input?: string, extra: Record<string, string> = {}) =>
    run({ ...env, ...extra }, ['job', ...args], input);

  before(async () => {
    [t, model] = await Promise.all([startTestApp(), startOpenAIServer()]);
    tmp = mkdtempSync(path.join(tmpdir(), 'docwright-cli-job-'));
    repo = createGitRepository({
      'docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } }, null, 2)}\n`,
      'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
    });
    const project = await t.app.projects.create({
      name: 'Local',
      repository: repo,
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    projectId = project.id;
    key = (await t.app.keys.create(project.id)).key;
    server = await startServerProcess({ ...t.database.env, DOCWRIGHT_MODEL: 'openai-compatible/scripted' });
    env = { DOCWRIGHT_URL: server.url, DOCWRIGHT_API_KEY: key, DOCWRIGHT_PROJECT: projectId };
  });
  after(async () => {
    await server?.stop();
    await Promise.all([t?.close(), model?.close()]);
    rmSync(tmp, { recursive: true, force: true });
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  test('missing DOCWRIGHT_API_KEY or project: a clear message and exit 2, nothing on stdout', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { DOCWRIGHT_URL: 'http://127.0.0.1:1', DOCWRIGHT_PROJECT: 'p' },
        /^docwright: DOCWRIGHT_API_KEY is not set/,
      ],
      [
        { DOCWRIGHT_URL: 'http://127.0.0.1:1', DOCWRIGHT_API_KEY: 'k' },
        /^docwright: no project: pass --project/,
      ],
      [
        { DOCWRIGHT_URL: 'localhost:8080', DOCWRIGHT_API_KEY: 'k', DOCWRIGHT_PROJECT: 'p' },
        /absolute http\(s\) URL/,
      ],
    ];
    for (const [vars, message] of cases) {
      const result = await run(vars, ['job', 'list', '--json']);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    }
    // --url and --project stand in for the variables; without either URL, the local default.
    assert.equal(serverUrl({}, {}), 'http://127.0.0.1:8080');
    assert.equal(
      serverUrl({}, { DOCWRIGHT_URL: ' http://docs.internal:9000 ' }),
      'http://docs.internal:9000',
    );
    assert.equal(serverUrl({ url: 'http://a:1' }, { DOCWRIGHT_URL: 'http://b:2' }), 'http://a:1');
    const flags = await run({ DOCWRIGHT_API_KEY: key }, [
      'job',
      'list',
      '--url',
      server.url,
      '--project',
      projectId,
      '--json',
    ]);
    assert.ok(Array.isArray(json<{ jobs: AgentJob[] }>(flags).jobs));
  });

  test('a server that is not running: a hint to start it or set DOCWRIGHT_URL, naming the URL; exit 1', async () => {
    const closed = await closedPort();
    const url = `http://127.0.0.1:${closed}`;
    for (const args of [['list'], ['get', 'job_x'], ['create', '--prompt', 'Hi']]) {
      const result = await job(args, undefined, { DOCWRIGHT_URL: url });
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.equal(
        result.stderr,
        `docwright: cannot reach docwright at ${url} (connection refused): is \`docwright serve\` running at ${url}? Start it, or set DOCWRIGHT_URL (or --url) to the server's address\n`,
      );
    }
  });

  test('job create --wait --json: progress lines on stderr, exit 0 and the completed job as one JSON document', async () => {
    model.push(
      toolCall('write_file', {
        path: 'limits.mdx',
        content: '---\ntitle: Limits\n---\n\n100 jobs per hour.\n',
      }),
      toolCall('read_file', { path: 'docs.json' }),
      toolCall('edit_file', { path: 'docs.json', old_string: '"index"', new_string: '"index", "limits"' }),
      toolCall('finish', { title: 'Document the limits', summary: 'Adds a Limits page.' }),
    );
    const result = await job(['create', '--prompt', 'Document the limits', '--wait', '--json']);
    const done = json<AgentJob>(result);
    assert.equal(done.status, 'completed', result.stderr);
    assert.equal(done.summary, 'Adds a Limits page.');
    assert.equal(done.branch, `docwright/${done.id.slice(-8)}`);
    assert.equal(done.prLink, null);
    assert.deepEqual(git(repo, 'diff', '--name-only', `main..${done.branch}`).split('\n'), [
      'docs.json',
      'limits.mdx',
    ]);
    const lines = result.stderr.trim().split('\n');
    // The id comes first, so that a piped run that is interrupted still says which job it was.
    assert.equal(lines[0], `${done.id}: following until it ends (Ctrl-C stops following, not the job)`);
    assert.match(lines[1]!, /^\d\d:\d\d:\d\d job\.created: Document the limits$/);
    assert.ok(
      lines.some((l) => /agent\.tool_call: write_file limits\.mdx$/.test(l)),
      result.stderr,
    );
    assert.match(lines.at(-1)!, /job\.completed: branch docwright\//);
  });

  test('job create --ask --wait: the answer, then its citations as path:start-end; nothing pushed', async () => {
    const refs = git(repo, 'for-each-ref');
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('answer', {
        text: 'The home page says **Welcome**.',
        citations: [{ path: 'index.mdx', startLine: 5, endLine: 5 }],
      }),
    );
    const result = await job(['create', '--ask', '--prompt', 'What does the home page say?', '--wait']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^mode: ask$/m);
    assert.match(result.stdout, /^prLink: -$/m);
    assert.ok(
      result.stdout.endsWith('answer:\n  The home page says **Welcome**.\ncitations:\n  index.mdx:5-5\n'),
      result.stdout,
    );
    assert.match(result.stderr.trim().split('\n').at(-1)!, /job\.completed: answered: The home page says/);
    assert.equal(git(repo, 'for-each-ref'), refs, 'no branch was pushed');
  });

  test('job create --wait on a terminal: a spinner with the latest event on stderr, then the job', {
    skip: scriptMissing,
  }, async () => {
    model.push(toolCall('finish', { title: 'Nothing to do', summary: 'Nothing needed.' }, { delayMs: 500 }));
    const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
    const command = [process.execPath, BIN, 'job', 'create', '--prompt', 'Check the docs', '--wait'].map(
      quote,
    );
    // util-linux `script` runs the command on a pseudo-terminal.
    const result = await run(env, [], undefined, [
      'script',
      '-qec',
      `stty cols 200 && exec ${command.join(' ')}`,
      '/dev/null',
    ]);
    assert.equal(result.code, 0, result.stdout);
    const ERASE_LINE = '\r\u001b[K';
    assert.ok(result.stdout.includes(ERASE_LINE), 'the line is redrawn in place');
    assert.match(result.stdout, /\[K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] job_\w+ active · /, 'a spinner line');
    assert.match(result.stdout, / active · run\.started: attempt 1\r/, 'showing the latest event');
    assert.doesNotMatch(result.stdout, /^\d\d:\d\d:\d\d job\./m, 'no plain progress lines');
    assert.match(result.stdout, /^status: completed\r?$/m);
  });

  test('job create without --wait (prompt from stdin), then job watch streams the run live until it ends', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }, { delayMs: 1_500 }),
      toolCall('edit_file', { path: 'index.mdx', old_string: 'Welcome.', new_string: 'Welcome, reader.' }),
      toolCall('finish', { title: 'Greet the reader', summary: 'A warmer welcome.' }),
    );
    const created = json<AgentJob>(await job(['create', '--prompt', '-', '--json'], 'Greet the reader\n'));
    assert.equal(created.status, 'active');
    const watchStarted = new Date().toISOString();
    const watched = await job(['watch', created.id]);
    assert.equal(watched.code, 0, watched.stderr);
    const lines = watched.stdout.trim().split('\n');
    assert.match(lines[0]!, /job\.created: Greet the reader$/);
    assert.ok(
      lines.some((l) => l.endsWith('agent.tool_call: edit_file index.mdx')),
      watched.stdout,
    );
    assert.match(lines.at(-2)!, /job\.completed: branch docwright\//);
    assert.equal(lines.at(-1), `job ${created.id} completed: branch docwright/${created.id.slice(-8)}`);
    assert.equal(new Set(lines).size, lines.length, 'no line twice');

    const again = json<{ job: AgentJob; events: JobEvent[] }>(await job(['watch', created.id, '--json']));
    assert.equal(again.job.status, 'completed');
    assert.ok(again.job.updatedAt > watchStarted, 'the job was still running when watch started');
    assert.equal(again.events[0]!.type, 'job.created');
    assert.equal(again.events.at(-1)!.type, 'job.completed');
    assert.equal(again.events.length, lines.length - 1, 'the same transcript, one event per line');
  });

  test('a job that fails: --wait exits 1 with the reason; a follow-up (job message --wait) shows only its own run', async () => {
    model.push(httpError(401, { message: 'Incorrect API key provided.' }));
    const result = await job(['create', '--prompt', 'Fix the typo', '--wait', '--json']);
    const failed = json<AgentJob>(result, 1);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'model-auth-failed');
    assert.match(result.stderr, new RegExp(`^docwright: job ${failed.id} failed: model-auth-failed: `, 'm'));

    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('finish', { title: 'Nothing to fix', summary: 'No typo found.' }),
    );
    const promptFile = path.join(tmp, 'prompt.txt');
    writeFileSync(promptFile, 'Look again for the typo\n');
    const followUp = await job(['message', failed.id, '--prompt-file', promptFile, '--wait']);
    assert.equal(followUp.code, 0, followUp.stderr);
    assert.match(followUp.stdout, /^status: completed$/m);
    assert.match(followUp.stdout, /^summary: No typo found\.$/m);
    const progress = followUp.stderr.trim().split('\n');
    assert.equal(progress[0], `${failed.id}: following until it ends (Ctrl-C stops following, not the job)`);
    assert.match(progress[1]!, /job\.message: Look again for the typo$/);
    assert.ok(!followUp.stderr.includes('job.created'), 'the first run is not replayed');
    assert.ok(!followUp.stderr.includes('job.failed'));

    model.push(httpError(401));
    const human = await job(['create', '--prompt', 'Fail again']);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^id: job_\w+$/m);
    assert.match(human.stdout, /^status: active$/m);
    const id = /^id: (job_\w+)$/m.exec(human.stdout)![1]!;
    const watched = await job(['watch', id, '--json']);
    assert.equal(json<{ job: AgentJob }>(watched, 1).job.status, 'failed', 'watch exits 1 unless completed');
  });

  test('job get, list (--status, --limit, --cursor, --all) and archive', async () => {
    const all = json<{ jobs: AgentJob[]; nextCursor: null }>(await job(['list', '--all', '--json']));
    // The jobs of the tests before, the question of `create --ask` among them.
    assert.equal(all.jobs.length, scriptMissing ? 5 : 6);
    assert.equal(all.nextCursor, null);
    const ids = all.jobs.map((j) => j.id);
    assert.deepEqual([...ids].sort().reverse(), ids, 'newest first');

    const first = json<{ jobs: AgentJob[]; nextCursor: string }>(
      await job(['list', '--limit', '3', '--json']),
    );
    assert.deepEqual(
      first.jobs.map((j) => j.id),
      ids.slice(0, 3),
    );
    const rest = json<{ jobs: AgentJob[]; nextCursor: null }>(
      await job(['list', '--limit', '3', '--cursor', first.nextCursor, '--json']),
    );
    assert.deepEqual(
      rest.jobs.map((j) => j.id),
      ids.slice(3),
    );
    assert.equal(rest.nextCursor, null);

    const completed = json<{ jobs: AgentJob[] }>(await job(['list', '--status', 'completed', '--json']));
    assert.deepEqual(
      completed.jobs.map((j) => j.id),
      all.jobs.filter((j) => j.status === 'completed').map((j) => j.id),
    );
    assert.equal(completed.jobs.length, all.jobs.length - 1, 'all but the failed one');

    const table = await job(['list', '--limit', '1']);
    assert.equal(table.code, 0);
    assert.match(table.stdout, /^ID +STATUS +CREATED +MODEL +PULL REQUEST \/ BRANCH$/m);
    assert.match(table.stdout, new RegExp(`^${ids[0]} +failed `, 'm'));
    assert.match(table.stdout, /^\(more: --cursor \S+\)$/m);

    const got = json<AgentJob>(await job(['get', ids[1]!, '--json']));
    assert.equal(got.id, ids[1]);
    assert.deepEqual(Object.keys(got).sort(), Object.keys(all.jobs[1]!).sort());

    const archived = json<AgentJob>(await job(['archive', ids[0]!, '--json']));
    assert.equal(archived.status, 'archived');
    assert.ok(archived.archivedAt);
    const watchArchived = await job(['watch', ids[0]!, '--json']);
    assert.equal(
      json<{ job: AgentJob }>(watchArchived, 1).job.status,
      'archived',
      'watch exits 1 unless completed',
    );
    const archivedAgain = json<AgentJob>(await job(['archive', ids[0]!, '--json']));
    assert.equal(archivedAgain.archivedAt, archived.archivedAt, 'archiving is idempotent');
    const human = await job(['archive', ids[1]!]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, new RegExp(`^archived ${ids[1]} \\(\\d{4}-`));

    const badStatus = await job(['list', '--status', 'done']);
    assert.equal(badStatus.code, 2);
    assert.match(badStatus.stderr, /Allowed choices are active, completed, archived, failed/);
  });

  test("job retry --wait runs a failed job's instruction again until it ends; a completed job is refused", async () => {
    model.push(httpError(401, { message: 'Incorrect API key provided.' }));
    const failed = json<AgentJob>(await job(['create', '--prompt', 'Mention the retry flag', '--json']));
    assert.equal(failed.status, 'active');
    assert.equal(json<{ job: AgentJob }>(await job(['watch', failed.id, '--json']), 1).job.status, 'failed');

    model.push(toolCall('finish', { title: 'Nothing to add', summary: 'The flag is documented.' }));
    const seen = model.requests.length;
    const retried = await job(['retry', failed.id, '--wait']);
    assert.equal(retried.code, 0, retried.stderr);
    assert.match(retried.stdout, /^status: completed$/m);
    assert.match(retried.stderr, /job\.retried: instruction 1 again$/m);
    assert.ok(!retried.stderr.includes('job.failed'), 'the failed run is not replayed');
    const asked = JSON.stringify(model.requests[seen]!.body);
    assert.ok(asked.includes('Mention the retry flag'), 'the model is given the same instruction');

    const refused = await job(['retry', failed.id]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^docwright: only a failed job can be retried/m);
  });

  test('API errors: one precise line on stderr, exit 1 (2 for a rejected request), and the key is never printed', async () => {
    const missing = await job(['get', 'job_01nosuchjob000000000000000', '--json']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    assert.equal(
      missing.stderr,
      `docwright: job job_01nosuchjob000000000000000 does not exist in this project (HTTP 404 job-not-found; GET /v2/agent/${projectId}/job/job_01nosuchjob000000000000000)\n`,
    );

    const wrongKey = `dwk_${'Z'.repeat(32)}000000`;
    const unauthorized = await job(['list'], undefined, { DOCWRIGHT_API_KEY: wrongKey });
    assert.equal(unauthorized.code, 1);
    assert.match(
      unauthorized.stderr,
      /^docwright: .*\(HTTP 401 unauthorized; GET \/v2\/agent\/prj_\w+\/jobs\)\n$/,
    );
    assert.ok(!unauthorized.stderr.includes(wrongKey) && !unauthorized.stdout.includes(wrongKey));

    const invalid = await job(['create', '--prompt', 'x', '--ref', 'bad..ref', '--model', 'nope']);
    assert.equal(invalid.code, 2);
    assert.match(
      invalid.stderr,
      /^docwright: invalid request: .*ref must be a valid branch name.*\(HTTP 400 invalid-request; /,
    );

    const both = await job(['create', '--prompt', 'x', '--prompt-file', '/dev/null']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give either --prompt or --prompt-file, not both/);
    const none = await job(['create']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /an instruction is required/);

    const down = await job(['list'], undefined, { DOCWRIGHT_URL: 'http://127.0.0.1:9' });
    assert.equal(down.code, 1);
    assert.match(
      down.stderr,
      /^docwright: request failed: .*network-error; GET \/v2\/agent\/prj_\w+\/jobs\)\n$/,
    );

    assert.ok(outputs.length > 20);
    assert.ok(!outputs.some((o) => o.includes(key)), 'the API key appears in no output');
  });
});
