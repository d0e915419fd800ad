// `docwright eval` as a user runs it: a real process, the real pipeline (worker, agent processes,
// git), against a scripted model that speaks the OpenAI wire protocol and picks its answers by
// the task each request belongs to. Judged by exit status, stdout, stderr, the report file, and
// what is left in the temporary directory.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { launchBrowser, seriousViolations, tooWide } from '../dashboard/browser.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { httpError, reply } from '../doubles/script.ts';
import { taskModel } from '../doubles/task-model.ts';
import { cleanEnv, runCli } from '../helpers/process.ts';
import { temporaryDirectory } from '../helpers/temp.ts';
import { waitFor } from '../helpers/worker.ts';

const write = (dir: string, files: Record<string, string>) => {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
};

const DOCS = {
  'docs/docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index', 'limits'] }] } }, null, 2)}\n`,
  'docs/index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
  'docs/limits.mdx': '---\ntitle: Limits\n---\n\nA project may create 50 jobs per hour.\n',
};
const req = (type: string, priority: string, extra: Record<string, unknown> = {}) => ({
  type,
  ...extra,
  priority,
  scoring: 'requirement',
});

/** The suite of these tests: one task of each kind, the model's plans for them, and one invalid task. */
function makeSuite(): string {
  const dir = temporaryDirectory('docwright-eval-suite-');
  write(path.join(dir, 'raise-limit'), {
    'task.json': JSON.stringify({
      id: 'raise-limit',
      instruction: 'Keep the docs in step with the code change.',
      expected: 'patch',
      change: { title: 'Raise the hourly limit to 100', description: 'The job limit is now 100 an hour.' },
      checks: [
        req('contains', 'P0', { path: 'limits.mdx', pattern: '100 jobs per hour' }),
        req('not-contains', 'P1', { path: 'limits.mdx', pattern: '\\b50\\b' }),
        req('valid', 'P0'),
        // Not met by the model below: the score is 8/10 of the requirement points, 80.
        req('contains', 'P1', { path: 'index.mdx', pattern: 'limit' }),
        { type: 'unchanged', path: 'docs.json', priority: 'P2', scoring: 'deduction' },
      ],
    }),
    ...DOCS,
    'code/base/limits.py': 'HOURLY_LIMIT = 50\n',
    'code/head/limits.py': 'HOURLY_LIMIT = 100\n',
    'rubric.md':
      '# Rubric\n\n- [P0] The limits page gives the new limit, 100 jobs per hour.\n- [P1] JUDGE-FAIL The page explains why the limit exists.\n- [P2 deduction] Nothing but the limit changes.\n- [P2] JUDGE-SILENT The tone matches.\n',
  });
  write(path.join(dir, 'refactor'), {
    'task.json': JSON.stringify({
      id: 'refactor',
      instruction: 'Keep the docs in step with the code change.',
      expected: 'no-changes',
      change: { title: 'Rename an internal helper', description: 'No behaviour changes.' },
      checks: [req('unchanged', 'P0')],
    }),
    ...DOCS,
    'code/base/limits.py': 'def helper():\n    return 50\n',
    'code/head/limits.py': 'def _helper():\n    return 50\n',
  });
  write(path.join(dir, 'overeager'), {
    'task.json': JSON.stringify({
      id: 'overeager',
      instruction: 'Keep the docs in step: a test was added.',
      expected: 'no-changes',
      checks: [req('unchanged', 'P0')],
    }),
    ...DOCS,
  });
  write(path.join(dir, 'gives-up'), {
    'task.json': JSON.stringify({
      id: 'gives-up',
      instruction: 'Write the page about quotas.',
      expected: 'patch',
      checks: [req('changed', 'P0')],
    }),
    ...DOCS,
  });
  write(path.join(dir, 'slow'), {
    'task.json': JSON.stringify({
      id: 'slow',
      instruction: 'Take your time.',
      expected: 'patch',
      checks: [req('changed', 'P0')],
    }),
    ...DOCS,
  });
  write(path.join(dir, 'refused'), {
    'task.json': JSON.stringify({
      id: 'refused',
      instruction: 'The model API refuses this one.',
      expected: 'patch',
      checks: [req('changed', 'P0')],
    }),
    ...DOCS,
  });
  write(path.join(dir, 'broken'), {
    'task.json': JSON.stringify({
      id: 'broken',
      instruction: 'x',
      expected: 'patch',
      checks: [req('contains', 'P0')],
    }),
    ...DOCS,
  });
  return dir;
}

const PLANS = [
  {
    match: 'Title: Raise the hourly limit to 100',
    steps: [
      toolCall('read_file', { path: 'limits.mdx' }),
      toolCall('edit_file', {
        path: 'limits.mdx',
        old_string: '50 jobs per hour',
        new_string: '100 jobs per hour <script>alert(1)</script>',
      }),
      toolCall('finish', {
        title: 'Raise the documented limit',
        summary: 'Now 100. <img src=x onerror=alert(2)>',
      }),
    ],
  },
  {
    match: 'Title: Rename an internal helper',
    steps: [toolCall('finish', { title: 'Nothing to do', summary: 'Internal only.' })],
  },
  {
    match: 'a test was added',
    steps: [
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', { path: 'index.mdx', old_string: 'Welcome.', new_string: 'Welcome, tested.' }),
      toolCall('finish', { title: 'Mention tests', summary: 'Says it is tested.' }),
    ],
  },
  // A model that takes its time: the evaluation is interrupted while it thinks.
  { match: 'Take your time', steps: [{ ...toolCall('read_file', { path: 'index.mdx' }), delayMs: 60_000 }] },
  { match: 'The model API refuses', steps: [httpError(401, { message: 'Incorrect API key provided.' })] },
  // Three turns without a tool call: the agent gives up and the job fails.
  { match: 'page about quotas', steps: [reply('Hmm.'), reply('Let me think.'), reply('I cannot.')] },
];

interface EvalJson {
  suite: string;
  model: string;
  tasks: {
    id: string;
    expected: string | null;
    outcome: string;
    score: number | null;
    p0Clean: boolean;
    checks: Record<string, unknown>[];
    jobId: string | null;
    error: string | null;
    tokens: { input: number; output: number };
    seconds: number;
  }[];
  summary: Record<string, unknown>;
}

describe('docwright eval, a real process against the scripted model', () => {
  let model: ScriptedServer;
  let suite: string;
  let tmp: string;
  let env: Record<string, string>;

  before(async () => {
    model = await startOpenAIServer({
      fallback: taskModel(PLANS, {
        // A criterion marked JUDGE-SILENT gets a judge that answers in prose, without a verdict.
        judge: (prompt) =>
          prompt.includes('JUDGE-SILENT')
            ? null
            : { passed: !prompt.includes('JUDGE-FAIL'), reason: 'As the rubric says.' },
      }),
    });
    suite = makeSuite();
    tmp = temporaryDirectory('docwright-eval-tmp-');
    // The evaluation's own temporary directory: what it leaves there is what it failed to remove.
    env = { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url, TMPDIR: tmp };
  });
  after(async () => {
    await model.close();
  });

  const eval_ = (args: string[], extra: Record<string, string> = {}) =>
    runCli(['eval', ...args], { ...env, ...extra }, '', { timeoutMs: 120_000 });
  const leftovers = () => readdirSync(tmp).filter((name) => name !== 'node-compile-cache');

  test('--json: one document as docs/evaluation.mdx gives it; each task scored by its rule; the invalid task named and the others run; exit 1', async () => {
    const run = await eval_([
      suite,
      '--model',
      'openai-compatible/scripted',
      '--json',
      '--tasks',
      'raise-limit,refactor,overeager,gives-up,broken',
    ]);
    assert.equal(run.code, 1, run.stderr);
    const doc = JSON.parse(run.stdout) as EvalJson;
    assert.deepEqual(Object.keys(doc), ['suite', 'model', 'scoring', 'tasks', 'summary']);
    assert.equal((doc as unknown as { scoring: string }).scoring, 'docwright');
    assert.equal(doc.suite, suite);
    assert.equal(doc.model, 'openai-compatible/scripted');
    const byId = new Map(doc.tasks.map((t) => [t.id, t]));
    assert.deepEqual([...byId.keys()].sort(), ['broken', 'gives-up', 'overeager', 'raise-limit', 'refactor']);
    for (const task of doc.tasks) {
      assert.deepEqual(Object.keys(task), [
        'id',
        'expected',
        'outcome',
        'score',
        'p0Clean',
        'checks',
        'jobId',
        'error',
        'tokens',
        'seconds',
      ]);
    }

    const patch = byId.get('raise-limit')!;
    assert.equal(patch.outcome, 'patch');
    assert.equal(patch.score, 80, '8 of 10 requirement points; the kept deduction costs nothing');
    assert.equal(patch.p0Clean, true);
    assert.match(patch.jobId!, /^job_/);
    assert.equal(patch.error, null);
    assert.ok(patch.tokens.input > 0 && patch.tokens.output > 0);
    assert.deepEqual(
      patch.checks.map((c) => [c.type, c.passed]),
      [
        ['contains', true],
        ['not-contains', true],
        ['valid', true],
        ['contains', false],
        ['unchanged', true],
      ],
    );
    assert.deepEqual(patch.checks[0], {
      type: 'contains',
      path: 'limits.mdx',
      pattern: '100 jobs per hour',
      priority: 'P0',
      scoring: 'requirement',
      passed: true,
    });
    // The code change reached the agent as the job's change (its brief in the system prompt).
    const instruction = model.requests.find((r) => r.rawBody.includes('Raise the hourly limit'))!.body
      .messages;
    assert.match(JSON.stringify(instruction), /HOURLY_LIMIT = 100/);

    assert.equal(byId.get('refactor')!.outcome, 'no-changes');
    assert.equal(byId.get('refactor')!.score, 100, 'nothing changed, as expected');
    assert.equal(byId.get('overeager')!.outcome, 'patch');
    assert.equal(byId.get('overeager')!.score, 0, 'a no-changes task whose job changed a file');

    const failed = byId.get('gives-up')!;
    assert.equal(failed.outcome, 'failed');
    assert.equal(failed.score, 0);
    assert.equal(failed.p0Clean, false);
    assert.match(failed.error!, /^agent-gave-up: /);

    const broken = byId.get('broken')!;
    assert.equal(broken.outcome, 'invalid');
    assert.equal(broken.expected, 'patch', 'its task.json says which kind it is');
    assert.equal(broken.score, null);
    assert.equal(broken.jobId, null);
    assert.match(broken.error!, /^task\.json: checks\.0\.pattern is required/);

    assert.deepEqual(doc.summary, {
      D: 40, // (80 + 0) / 2
      N: 50, // one of the two no-changes tasks at 100
      composite: 44.4, // 2·40·50 / 90
      p0CleanRate: 50,
      tasks: 5,
      patchTasks: 2,
      noChangeTasks: 2,
      tokens: {
        input: doc.tasks.reduce((s, t) => s + t.tokens.input, 0),
        output: doc.tasks.reduce((s, t) => s + t.tokens.output, 0),
      },
      seconds: doc.summary.seconds,
    });
    // Progress: a line per finished task on stderr, nothing but the document on stdout.
    for (const id of ['raise-limit', 'refactor', 'overeager', 'gives-up', 'broken'])
      assert.match(run.stderr, new RegExp(`^. ${id}: `, 'm'));
    assert.deepEqual(leftovers(), [], 'every temporary file and folder is removed');
  });

  test('--tasks runs only those; with no invalid task left the exit status is 0; without --json a table', async () => {
    const run = await eval_([
      suite,
      '--model',
      'openai-compatible/scripted',
      '--tasks',
      'refactor,overeager',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^TASK +EXPECTED +OUTCOME +SCORE/m);
    assert.match(run.stdout, /^refactor +no-changes +no-changes +100 /m);
    assert.match(run.stdout, /^overeager +no-changes +patch +0 /m);
    assert.doesNotMatch(run.stdout, /raise-limit|gives-up|broken/);
    assert.match(run.stdout, /N 50% \(2 no-change tasks\)/);
    assert.deepEqual(leftovers(), []);
  });

  test('a task the model cannot be used for "could not run": it fails, and the exit status is 1', async () => {
    const run = await eval_([suite, '--model', 'openai-compatible/scripted', '--tasks', 'refused', '--json']);
    assert.equal(run.code, 1, run.stderr);
    const [task] = (JSON.parse(run.stdout) as EvalJson).tasks;
    assert.equal(task!.outcome, 'failed');
    assert.equal(task!.score, 0);
    assert.match(task!.error!, /^model-auth-failed: /);
  });

  test('--judge: each rubric criterion rated by the judge model, counted like a check of its priority', async () => {
    const before = model.requests.length;
    const run = await eval_([
      suite,
      '--model',
      'openai-compatible/scripted',
      '--judge',
      'openai-compatible/judge',
      '--tasks',
      'raise-limit',
      '--json',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const [task] = (JSON.parse(run.stdout) as EvalJson).tasks;
    assert.deepEqual(
      task!.checks.filter((c) => c.type === 'judge'),
      [
        {
          type: 'judge',
          criterion: 'The limits page gives the new limit, 100 jobs per hour.',
          priority: 'P0',
          scoring: 'requirement',
          passed: true,
        },
        {
          type: 'judge',
          criterion: 'JUDGE-FAIL The page explains why the limit exists.',
          priority: 'P1',
          scoring: 'requirement',
          passed: false,
        },
        {
          type: 'judge',
          criterion: 'Nothing but the limit changes.',
          priority: 'P2',
          scoring: 'deduction',
          passed: true,
        },
        {
          type: 'judge',
          criterion: 'JUDGE-SILENT The tone matches.',
          priority: 'P2',
          scoring: 'requirement',
          passed: false,
        },
      ],
    );
    assert.equal(
      task!.score,
      68.8,
      '(8 + 3 of the judge) of (10 + 6) requirement points; no verdict counts as failed',
    );
    const judged = model.requests
      .slice(before)
      .filter((r) => r.body.model === 'openai-compatible/judge' || r.body.model === 'judge');
    assert.equal(judged.length, 5, 'one call per criterion, and a second try for the one given no verdict');
    const prompt = JSON.stringify(judged[0]!.body.messages);
    assert.match(prompt, /\+A project may create 100 jobs per hour/, 'the judge sees the diff the job made');
    assert.match(prompt, /The limits page gives the new limit/);
  });

  test('--report: a self-contained HTML file with each task, its checks and diff; model output escaped', async () => {
    const report = path.join(temporaryDirectory('docwright-eval-report-'), 'report.html');
    const run = await eval_([
      suite,
      '--model',
      'openai-compatible/scripted',
      '--report',
      report,
      '--tasks',
      'raise-limit,broken',
    ]);
    assert.equal(run.code, 1, run.stderr);
    const page = readFileSync(report, 'utf8');
    assert.match(page, /^<!doctype html>/);
    assert.match(page, /<style>[^<]*--add-bg/, "the dashboard's stylesheet, inlined");
    assert.doesNotMatch(page, /<link |<script|src="http/, 'nothing loaded from elsewhere, no script');
    assert.match(page, /100 jobs per hour &lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'the diff, escaped');
    assert.match(page, /Now 100\. &lt;img src=x onerror=alert\(2\)&gt;/, "the agent's summary, escaped");
    assert.match(page, /limits\.mdx/);
    assert.ok(page.includes('>80<'), 'the score');
    assert.match(page, /checks\.0\.pattern is required/, "the invalid task's error");
    // Accessible and usable on a phone, like the dashboard it takes its look from.
    const browser = await launchBrowser();
    try {
      for (const width of [1280, 375]) {
        const tab = await browser.newPage({ viewport: { width, height: 900 } });
        await tab.goto(pathToFileURL(report).href);
        assert.deepEqual(await seriousViolations(tab), [], `axe at ${width} px`);
        assert.deepEqual(await tooWide(tab), [], `nothing too wide at ${width} px`);
      }
    } finally {
      await browser.close();
    }
  });

  test('Ctrl-C while a job runs: the run stops, exit status 130, and every temporary file is removed', async (ctx) => {
    const child = spawn(
      process.execPath,
      [
        path.resolve(import.meta.dirname, '../../bin/docwright.js'),
        'eval',
        suite,
        '--model',
        'openai-compatible/scripted',
        '--tasks',
        'slow',
      ],
      {
        env: { ...cleanEnv(), DOCWRIGHT_LOG_LEVEL: 'error', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Failing before the interrupt below (the model never asked): the evaluation stops with the test.
    ctx.after(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    });
    // The agent is waiting for the model: the job is running, with a checkout and an agent process.
    await waitFor(() => model.requests.some((r) => r.rawBody.includes('Take your time')), {
      timeoutMs: 60_000,
    });
    assert.ok(readdirSync(tmp).length > 0, 'the evaluation has made its temporary files');
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /interrupted; its temporary files are removed/);
    assert.deepEqual(leftovers(), []);
  });

  test('usage errors exit 2 before anything runs', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[suite], {}, /no model: pass --model/],
      [[suite, '--model', 'gpt-4'], {}, /--model gpt-4: use provider\/model/],
      [
        [suite, '--model', 'openai/gpt-test'],
        {},
        /--model: model "openai\/gpt-test" needs an API key: set OPENAI_API_KEY/,
      ],
      [
        [suite, '--model', 'openai-compatible/x', '--tasks', 'nope'],
        {},
        /--tasks: no task nope in the suite/,
      ],
      [[path.join(suite, 'missing'), '--model', 'openai-compatible/x'], {}, /is not a folder/],
      [
        [suite, '--dogbench', suite, '--model', 'openai-compatible/x', '--judge', 'openai-compatible/j'],
        {},
        /not both/,
      ],
      [
        [suite, '--model', 'openai-compatible/x', '--report', '/nonexistent/dir/r.html'],
        {},
        /--report .*cannot write/,
      ],
      [[suite, '--model', 'openai-compatible/x', '--concurrency', '0'], {}, /--concurrency/],
    ];
    for (const [args, extra, message] of cases) {
      const run = await eval_(args, extra);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stdout, '');
    }
    // DOCWRIGHT_MODEL stands in for --model.
    const fromEnv = await eval_([suite, '--tasks', 'refactor', '--json'], {
      DOCWRIGHT_MODEL: 'openai-compatible/scripted',
    });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.equal((JSON.parse(fromEnv.stdout) as EvalJson).model, 'openai-compatible/scripted');
  });
});
