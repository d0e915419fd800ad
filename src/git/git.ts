import { spawn } from 'node:child_process';

export class GitError extends Error {
  readonly exitCode: number | null;
  readonly stderr: string;
  constructor(message: string, exitCode: number | null, stderr: string) {
    super(message);
    this.name = 'GitError';
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

export interface GitOptions {
  cwd?: string;
  signal?: AbortSignal;
  /** Written to stdin (commit messages go this way, never on the command line). */
  input?: string;
  /** Extra environment, e.g. GIT_CONFIG_* carrying credentials. */
  env?: Record<string, string>;
  timeoutMs?: number;
}

/**
 * Runs git without a terminal, without repository hooks, and without any
 * user or system configuration that could change its behaviour.
 */
export function git(args: string[], options: GitOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'git',
      ['-c', 'core.hooksPath=/dev/null', '-c', 'protocol.file.allow=always', ...args],
      {
        cwd: options.cwd,
        signal: options.signal,
        timeout: options.timeoutMs ?? 120_000,
        env: {
          ...process.env,
          GIT_TERMINAL_PROMPT: '0',
          GIT_ASKPASS: '',
          SSH_ASKPASS: '',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          LC_ALL: 'C',
          ...options.env,
        },
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', (error) => reject(error));
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new GitError(`git ${args[0]} failed: ${stderr.trim().split('\n').at(-1) ?? ''}`, code, stderr),
        );
    });
    if (options.input !== undefined && child.stdin) {
      // A git that exits before reading its input closes the pipe; the exit code tells what happened.
      child.stdin.on('error', () => {});
      child.stdin.end(options.input);
    }
  });
}
