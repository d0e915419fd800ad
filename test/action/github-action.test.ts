// The GitHub Action (action.yml, docs/github-action.mdx): its step script run the way the runner runs it —
// inputs as INPUT_* variables, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files — against a
// `docwright serve` process on the scripted model.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import { cliCommand, writeOutput } from '../../src/action/github-action.ts';
import { httpError, type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { createGitRepository, startTestApp, type TestApp } from '../helpers/app.ts';
import { cleanEnv, type ServerProcess, startServerProcess } from '../helpers/process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const action = YAML.parse(readFileSync(path.join(ROOT, 'action.yml'), 'utf8'));
const step = action.runs.steps.find((s: { id?: string }) => s.id === 'job');

/** GITHUB_OUTPUT's `name<<delimiter` blocks, as the runner reads them. */
function readOutputs(file: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const match = /^([\w-]+)<<(.+)$/.exec(lines[i]!);
    if (!match) continue;
    const value: string[] = [];
    for (i++; lines[i] !== match[2]; i++) value.push(lines[i]!);
    outputs[match[1]!] = value.join('\n');
  }
  return outputs;
}

interface StepRun {
  code: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

describe('GitHub Action step script', () => {
  let t: TestApp;
  let model: ScriptedServer;
  let server: ServerProcess;
  let repo: string;
  let tmp: string;
  let inputs: Record<string, string>;

  /** Runs the step's command with the step's environment, inputs mapped as action.yml maps them. */
  async function runStep(
    values: Record<string, string>,
    extraEnv: Record<string, string> = {},
  ): Promise<StepRun> {
    const dir = mkdtempSync(path.join(tmp, 'step-'));
    const outputFile = path.join(dir, 'output');
    const summaryFile = path.join(dir, 'summary');
    writeFileSync(outputFile, '');
    writeFileSync(summaryFile, '');
    const env: Record<string, string> = {
      ...(cleanEnv() as Record<string, string>),
      GITHUB_ACTIONS: 'true',
      GITHUB_ACTION_PATH: ROOT,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      ...extraEnv,
    };
    // `${{ inputs.x }}` as the runner substitutes it, defaults included.
    for (const [name, template] of Object.entries(step.env as Record<string, string>)) {
      const input = /\$\{\{ inputs\.([\w-]+) \}\}/.exec(template)![1]!;
      env[name] = values[input] ?? action.inputs[input].default ?? '';
    }
    const child = spawn('bash', ['-c', step.run], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    return {
      code,
      stdout,
      stderr,
      outputs: readOutputs(outputFile),
      summary: readFileSync(summaryFile, 'utf8'),
    };
  }

  before(async () => {
    [t, model] = await Promise.all([startTestApp(), startOpenAIServer()]);
    tmp = mkdtempSync(path.join(tmpdir(), 'docwright-action-'));
    repo = createGitRepository({ 'index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n' });
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: repo,
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    server = await startServerProcess({ ...t.database.env, DOCWRIGHT_MODEL: 'openai-compatible/scripted' });
    inputs = {
      url: server.url,
      'api-key': (await t.app.keys.create(project.id)).key,
      project: project.id,
    };
  });
  after(async () => {
    await server?.stop();
    await Promise.all([t?.close(), model?.close()]);
    if (repo) rmSync(repo, { recursive: true, force: true });
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('action.yml is a composite action with the inputs and outputs of docs/github-action.mdx, each input passed as INPUT_*', () => {
    assert.equal(action.runs.using, 'composite');
    assert.deepEqual(Object.keys(action.inputs), ['url', 'api-key', 'project', 'prompt', 'ref', 'wait']);
    assert.deepEqual(Object.keys(action.outputs), ['job-id', 'status', 'pr-link']);
    for (const output of Object.keys(action.outputs)) {
      assert.equal(action.outputs[output].value, `\${{ steps.job.outputs.${output} }}`);
    }
    for (const input of Object.keys(action.inputs)) {
      assert.equal(step.env[`INPUT_${input.toUpperCase()}`], `\${{ inputs.${input} }}`);
    }
    assert.ok(!step.run.includes('${{'), 'no input is interpolated into the shell command');
    assert.deepEqual(cliCommand(ROOT), [process.execPath, path.join(ROOT, 'bin', 'docwright.js')]);
  });

  test("docwright runs from the action's own checkout: its dependencies installed there by npm ci, nothing fetched by name", () => {
    const steps = action.runs.steps as { run?: string; uses?: string; 'working-directory'?: string }[];
    const install = steps.find((s) => s.run?.startsWith('npm ci'));
    assert.ok(install, 'a step installs the dependencies');
    assert.equal(install['working-directory'], `\${{ github.action_path }}`);
    assert.match(install.run!, /--ignore-scripts/);
    assert.ok(steps.indexOf(install) < steps.indexOf(step), 'before the job step');
    assert.equal(step.run, 'node "$GITHUB_ACTION_PATH/src/action/github-action.ts"');
    for (const s of steps) assert.doesNotMatch(JSON.stringify(s), /npx|docwright@/);
    // What `uses:` checks out has no node_modules until the install step ran.
    assert.throws(() => cliCommand(tmp), /dependencies are not installed in .*: run npm ci --omit=dev there/);
  });

  test('a checkout without its dependencies fails the step with what to do, and never runs npx', async () => {
    const checkout = path.join(tmp, 'checkout');
    mkdirSync(path.join(checkout, 'src', 'action'), { recursive: true });
    copyFileSync(path.join(ROOT, 'package.json'), path.join(checkout, 'package.json'));
    copyFileSync(
      path.join(ROOT, 'src', 'action', 'github-action.ts'),
      path.join(checkout, 'src', 'action', 'github-action.ts'),
    );
    // An npx that records being run: whatever it would fetch is not the action's pinned code.
    const bin = path.join(tmp, 'bin');
    const ran = path.join(tmp, 'npx-ran');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'npx'), `#!/bin/sh\ntouch '${ran}'\n`, { mode: 0o755 });
    const run = await runStep(
      { ...inputs, prompt: 'x' },
      { GITHUB_ACTION_PATH: checkout, PATH: `${bin}:${process.env.PATH}` },
    );
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /^::error::docwright's dependencies are not installed in .*checkout: run npm ci/m,
    );
    assert.equal(existsSync(ran), false, 'npx was not run');
    assert.deepEqual(run.outputs, {});
  });

  test('waits for the job, sets job-id, status and pr-link, masks the key, exit 0', async () => {
    model.push(
      toolCall('read_file', { path: 'index.mdx' }),
      toolCall('edit_file', { path: 'index.mdx', old_string: 'Welcome.', new_string: 'Welcome, readers.' }),
      toolCall('finish', { title: 'Greet readers', summary: 'Greets readers.' }),
    );
    const run = await runStep({ ...inputs, prompt: 'Greet the readers\nwith a "quote" and $HOME `x`' });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.outputs['job-id']!, /^job_/);
    assert.equal(run.outputs.status, 'completed');
    assert.equal(run.outputs['pr-link'], '', 'a local repository gets a branch, no pull request');
    assert.match(run.summary, new RegExp(`docwright job \`${run.outputs['job-id']}\`: branch docwright/`));
    assert.match(run.stderr, /job\.completed/, 'progress in the log');
    const key = inputs['api-key']!;
    assert.equal(run.stdout.split('\n')[0], `::add-mask::${key}`, 'the key is masked first');
    assert.ok(!`${run.stdout.split('\n').slice(1).join('\n')}${run.stderr}`.includes(key));
    const job = await t.app.jobs.get(inputs.project!, run.outputs['job-id']!);
    const events = await t.app.jobs.events(inputs.project!, job.id, {});
    assert.equal(
      (events[0]!.data as { prompt: string }).prompt,
      'Greet the readers\nwith a "quote" and $HOME `x`',
      'the prompt arrives exactly, untouched by the shell',
    );
  });

  test('a failed job fails the step with its error; wait: false returns the active job', async () => {
    model.push(httpError(401, { message: 'bad key' }));
    const failed = await runStep({ ...inputs, prompt: 'Anything' });
    assert.equal(failed.code, 1);
    assert.equal(failed.outputs.status, 'failed');
    assert.match(failed.stdout, /^::error::docwright job job_\w+ failed: model-auth-failed: /m);

    model.push(toolCall('finish', { title: 'Later', summary: 'Later.' }, { delayMs: 1_000 }));
    const queued = await runStep({ ...inputs, prompt: 'Do not wait', wait: 'false' });
    assert.equal(queued.code, 0, queued.stdout + queued.stderr);
    assert.equal(queued.outputs.status, 'active');
    assert.match(queued.outputs['job-id']!, /^job_/);
  });

  test('missing or bad inputs and API errors fail the step with a one-line ::error::', async () => {
    const missing = await runStep({ ...inputs, prompt: '' });
    assert.equal(missing.code, 1);
    assert.match(missing.stdout, /^::error::Input required and not supplied: prompt$/m);
    const badWait = await runStep({ ...inputs, prompt: 'x', wait: 'yes' });
    assert.match(badWait.stdout, /^::error::Input wait must be true or false/m);
    const refused = await runStep({ ...inputs, prompt: 'x', 'api-key': 'dwk_not_a_key' });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /API key is malformed/);
    assert.match(refused.stdout, /^::error::docwright job create failed \(exit 1\)/m);
    assert.deepEqual(refused.outputs, {});
  });

  test('writeOutput uses a delimiter the value cannot contain', () => {
    const file = path.join(tmp, 'multi');
    writeFileSync(file, '');
    writeOutput(file, 'pr-link', 'line one\nline two');
    assert.deepEqual(readOutputs(file), { 'pr-link': 'line one\nline two' });
  });
});
