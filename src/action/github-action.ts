/**
 * The step script of the GitHub Action (action.yml, docs/github-action.mdx): reads the inputs GitHub passes as
 * `INPUT_<NAME>`, runs `docwright job create [--wait] --json` with the key in the environment and
 * the prompt on stdin (never on a command line), and writes `job-id`, `status` and `pr-link` to
 * `GITHUB_OUTPUT` and a line to the step summary. Its exit code is the CLI's: 0 when the job
 * completed (or, without waiting, was created). Only node: modules, so that it can say what is
 * wrong when the action's checkout lacks its dependencies.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import path from 'node:path';

/** The action's root: the docwright repository at the version the workflow pinned. */
const ACTION_ROOT = path.resolve(import.meta.dirname, '../..');

class InputError extends Error {}

/** An input as GitHub passes it (`api-key` → `INPUT_API-KEY`), trimmed. */
export function getInput(name: string, env: NodeJS.ProcessEnv, required = false): string {
  const value = (env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim();
  if (required && value === '') throw new InputError(`Input required and not supplied: ${name}`);
  return value;
}

/** A boolean input as GitHub's toolkit reads one (YAML 1.2 core schema). */
export function getBooleanInput(name: string, env: NodeJS.ProcessEnv): boolean {
  const value = getInput(name, env);
  if (['true', 'True', 'TRUE'].includes(value)) return true;
  if (['false', 'False', 'FALSE'].includes(value)) return false;
  throw new InputError(`Input ${name} must be true or false (got "${value}")`);
}

/**
 * How to run docwright: the CLI of the action's own checkout, whose dependencies action.yml's
 * install step put there. Never a package fetched by name from npm (that name is anyone's to
 * publish first), so a checkout without them is an error that says how to install them.
 */
export function cliCommand(root = ACTION_ROOT): string[] {
  if (!existsSync(path.join(root, 'node_modules', 'commander'))) {
    throw new InputError(
      `docwright's dependencies are not installed in ${root}: run npm ci --omit=dev there (action.yml's install step does)`,
    );
  }
  return [process.execPath, path.join(root, 'bin', 'docwright.js')];
}

/** Appends `name=value` to a GITHUB_OUTPUT-style file, with a delimiter no value can contain. */
export function writeOutput(file: string, name: string, value: string): void {
  let delimiter: string;
  do delimiter = `ghadelimiter_${randomBytes(16).toString('hex')}`;
  while (value.includes(delimiter));
  appendFileSync(file, `${name}<<${delimiter}\n${value}\n${delimiter}\n`);
}

/** Workflow commands are single lines; `%`, CR and LF are escaped as the runner expects. */
const escapeData = (text: string) => text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

interface Job {
  id: string;
  status: string;
  prLink: string | null;
  branch: string | null;
  error: { code: string; message: string } | null;
}

async function main(env: NodeJS.ProcessEnv): Promise<number> {
  const url = getInput('url', env, true);
  const apiKey = getInput('api-key', env, true);
  // Masked before anything could print it.
  process.stdout.write(`::add-mask::${apiKey}\n`);
  const project = getInput('project', env, true);
  const prompt = getInput('prompt', env, true);
  const ref = getInput('ref', env);
  const wait = getBooleanInput('wait', env);

  const [command, ...base] = cliCommand();
  const args = [...base, 'job', 'create', '--prompt', '-', '--json'];
  if (ref) args.push('--ref', ref);
  if (wait) args.push('--wait');
  const child = spawn(command!, args, {
    env: { ...env, DOCWRIGHT_URL: url, DOCWRIGHT_API_KEY: apiKey, DOCWRIGHT_PROJECT: project },
    // Progress and errors go straight to the job log.
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stdin!.end(prompt);
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exit) => resolve(exit ?? 1));
  });

  let job: Job | undefined;
  try {
    job = JSON.parse(stdout) as Job;
  } catch {
    process.stdout.write(
      `::error::${escapeData(`docwright job create failed (exit ${code}); see the log above`)}\n`,
    );
    return code === 0 ? 1 : code;
  }
  if (env.GITHUB_OUTPUT) {
    writeOutput(env.GITHUB_OUTPUT, 'job-id', job.id);
    writeOutput(env.GITHUB_OUTPUT, 'status', job.status);
    writeOutput(env.GITHUB_OUTPUT, 'pr-link', job.prLink ?? '');
  }
  const result = job.prLink
    ? `pull request ${job.prLink}`
    : job.status === 'completed'
      ? job.branch
        ? `branch ${job.branch}`
        : 'no files changed'
      : job.status;
  if (env.GITHUB_STEP_SUMMARY)
    appendFileSync(env.GITHUB_STEP_SUMMARY, `docwright job \`${job.id}\`: ${result}\n`);
  if (job.status === 'failed') {
    process.stdout.write(
      `::error::${escapeData(`docwright job ${job.id} failed: ${job.error?.code}: ${job.error?.message}`)}\n`,
    );
  } else if (job.status === 'archived') {
    process.stdout.write(
      `::error::${escapeData(`docwright job ${job.id} was archived before it finished`)}\n`,
    );
  } else {
    process.stdout.write(`docwright job ${job.id}: ${result}\n`);
  }
  return code;
}

if (import.meta.main) {
  try {
    process.exitCode = await main(process.env);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stdout.write(`::error::${escapeData(message)}\n`);
    process.exitCode = 1;
  }
}
