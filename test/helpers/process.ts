import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killChild, trackChild } from './children.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/docwright.js');

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote, for assertions on logs. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ServerProcessOptions {
  /** The `docwright` executable to run (default: this checkout's bin/docwright.js under this Node). */
  bin?: string;
  cwd?: string;
  /** The whole environment instead of this process's plus `env`. */
  replaceEnv?: boolean;
}

/** Whether any process of the group `pgid` is still there. */
function groupAlive(pgid: number): boolean {
  try {
    execFileSync('pgrep', ['-g', String(pgid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops a process started in a group of its own and resolves with its exit code once every
 * process of the group has gone: a spare agent process or a git child that outlived a killed
 * server could otherwise still write into a directory the test is about to remove.
 */
async function stopProcessGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
  // Killed after 5 s; after 10 s what is left (a zombie nobody reaps) is not waited for.
  const started = Date.now();
  while (groupAlive(child.pid!) && Date.now() - started < 10_000) {
    if (Date.now() - started > 5_000) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await sleep(20);
  }
  return child.exitCode;
}

/** Starts `docwright serve --port 0` as a real process and waits until it listens. */
export async function startServerProcess(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
  options: ServerProcessOptions = {},
): Promise<ServerProcess> {
  const [file, ...prefix] = options.bin ? [options.bin] : [process.execPath, BIN];
  const child = spawn(file!, [...prefix, 'serve', '--port', '0', ...args], {
    cwd: options.cwd,
    // A group of its own: stop() waits for its agent and git processes too.
    detached: true,
    env: options.replaceEnv ? env : { ...process.env, DOCWRIGHT_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackChild(child, { group: true });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      killChild(child, true);
      reject(new Error(`server did not start:\n${output}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    stop: (signal = 'SIGTERM') => stopProcessGroup(child, signal),
  };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The caller's environment minus anything that would point docwright elsewhere: its own
 * variables, a database, a data directory, model keys and endpoints.
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(DOCWRIGHT_|ANTHROPIC_|OPENAI_)|^(DATABASE_URL|XDG_DATA_HOME)$/.test(name)) env[name] = value;
  }
  return env;
}

export interface CliOptions {
  cwd?: string;
  /** A command still running after this long is killed, and the run reports code -1 (default 60 s). */
  timeoutMs?: number;
}

/** Runs `docwright <args>` to the end, as a user would. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  input = '',
  options: CliOptions = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...cleanEnv(), DOCWRIGHT_LOG_LEVEL: 'warn', ...env },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

/** Starts `docwright worker` and waits until it runs. */
export async function startWorkerCommand(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: { ...cleanEnv(), DOCWRIGHT_LOG_LEVEL: 'info', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackChild(child, { group: true });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      killChild(child, true);
      reject(new Error(`worker did not start:\n${output}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('docwright worker running')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}:\n${output}`));
    });
  });
  return {
    url: '',
    child,
    output: () => output,
    stop: (signal = 'SIGTERM') => stopProcessGroup(child, signal),
  };
}

/** A loopback port nothing listens on: one the system just handed out and took back. */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Why tests that run the CLI on a terminal (util-linux `script`) cannot run here, or false. */
export const scriptMissing: string | false = (() => {
  try {
    return execFileSync('script', ['--version'], { encoding: 'utf8' }).includes('util-linux')
      ? false
      : 'script is not the util-linux one';
  } catch {
    return 'no script command to run the CLI on a terminal';
  }
})();
